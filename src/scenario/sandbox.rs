//! `sandbox:` of a scenario or of `harness.yaml` (docs/scenarios.md,
//! "Sandbox"): `off`, or what the sandbox lets through besides the
//! workspace and a private `TMPDIR`. The plan it is checked into is in
//! `load/sandbox.rs`; the sandbox itself is the run layer's.

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de;
use serde::de::value::MapAccessDeserializer;

use super::two_way::schema;
use super::two_way::two_way;

/// `sandbox: off`, or `sandbox: { network, write }`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum SandboxSpec {
    /// `off`: the scenario's programs run without a sandbox.
    Off,
    /// The sandbox, with what it lets through.
    On(SandboxObject),
}

/// What the sandbox lets through besides the workspace and a private
/// `TMPDIR`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SandboxObject {
    /// Let programs reach the network (default false: none, but for the
    /// harness's own endpoints the scenario uses).
    #[serde(default)]
    pub network: bool,
    /// More paths programs may write below (absolute, existing, not
    /// through a symlink; `${dir}` is the file's directory).
    #[serde(default)]
    pub write: Vec<String>,
}

two_way!(SandboxSpec, "`off` or an object with network and write", {
    fn visit_str<E: de::Error>(self, v: &str) -> Result<SandboxSpec, E> {
        match v {
            "off" => Ok(SandboxSpec::Off),
            other => Err(E::invalid_value(de::Unexpected::Str(other), &self)),
        }
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<SandboxSpec, E> {
        // YAML 1.1 readers take `off` for false; a file may mean the same.
        if v {
            Err(E::invalid_value(de::Unexpected::Bool(v), &self))
        } else {
            Ok(SandboxSpec::Off)
        }
    }
    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<SandboxSpec, A::Error> {
        SandboxObject::deserialize(MapAccessDeserializer::new(map)).map(SandboxSpec::On)
    }
});

schema!(SandboxSpec, |generator| {
    let object = generator.subschema_for::<SandboxObject>();
    schemars::json_schema!({
        "description": "`off` (no sandbox), or what the sandbox lets through besides the workspace and a private TMPDIR",
        "anyOf": [{"enum": ["off", false]}, object]
    })
});
