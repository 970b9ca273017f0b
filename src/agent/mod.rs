//! The agent layer: messages, the [`Provider`] trait, the agent loop and the
//! faux (scripted) provider, and the presentation of the machine's paths
//! to the model; and for real agents, the model APIs' wire formats
//! ([`wire`]), the faux script served over HTTP ([`serve`]) and the
//! built-in agent profiles ([`profiles`]).
//!
//! It uses the tool layer and knows nothing of YAML or scenarios: a script
//! for the faux provider is plain data ([`FauxScript`]), built by whoever
//! reads scenario files.

pub mod agent_loop;
mod bpe;
pub mod events;
pub mod faux;
pub mod mcp_config;
pub mod message;
pub mod present;
pub mod pricing;
pub mod profiles;
pub mod provider;
pub mod serve;
pub mod tokens;
pub mod wire;

pub use agent_loop::CallRecord;
pub use agent_loop::DEFAULT_SYSTEM_PROMPT;
pub use agent_loop::LoopOptions;
pub use agent_loop::MAX_KEPT_UPDATE_BYTES;
pub use agent_loop::RunningCall;
pub use agent_loop::Streamed;
pub use agent_loop::Transcript;
pub use agent_loop::run_loop;
pub use events::AgentEvent;
pub use faux::FauxArgs;
pub use faux::FauxCall;
pub use faux::FauxProvider;
pub use faux::FauxReport;
pub use faux::FauxScript;
pub use faux::FauxStep;
pub use message::AssistantBlock;
pub use message::AssistantMessage;
pub use message::Message;
pub use message::StopReason;
pub use message::ToolResultMessage;
pub use message::Usage;
pub use present::Presenter;
pub use provider::Provider;
pub use provider::ProviderError;
pub use provider::Request;
pub use tokens::Chars4;
pub use tokens::TokenCounter;
