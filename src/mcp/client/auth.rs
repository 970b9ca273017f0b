//! OAuth for a server reached by URL: the client credentials grant
//! (machine to machine, SEP-1046), through rmcp's `auth` support.
//!
//! Before `initialize`, the server's protected resource metadata and its
//! authorization server's metadata are discovered, the credentials are
//! exchanged at the token endpoint for an access token (with `resource`
//! the server's URL, and the scopes asked for), and the token is sent as
//! `Authorization: Bearer …` with every request of the session. A secret
//! is sent as `client_secret_post`, or `client_secret_basic` when that is
//! the only method the authorization server offers; a private key signs a
//! JWT assertion instead (`private_key_jwt`). Nothing here prints a
//! secret: [`ClientCredentials`]'s `Debug` leaves them out.

use rmcp::transport::auth::AuthError;
use rmcp::transport::auth::ClientCredentialsConfig;
use rmcp::transport::auth::JwtSigningAlgorithm;
use rmcp::transport::auth::OAuthState;

use super::visible::visible_text;

/// The credentials of an OAuth client.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCredentials {
    /// Its id at the authorization server.
    pub client_id: String,
    /// How it proves it.
    pub credential: Credential,
    /// The scopes asked for.
    pub scopes: Vec<String>,
}

/// How a client proves who it is.
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    /// A shared secret (`client_secret_post` or `client_secret_basic`).
    Secret(String),
    /// A PEM private key signing a JWT assertion (`private_key_jwt`).
    PrivateKey {
        /// The key, PEM-encoded.
        pem: String,
        /// `ES256`, `ES384`, `RS256`, `RS384` or `RS512`.
        algorithm: String,
    },
}

impl std::fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let method = match &self.credential {
            Credential::Secret(_) => "client_secret".to_owned(),
            Credential::PrivateKey { algorithm, .. } => format!("private_key_jwt {algorithm}"),
        };
        f.debug_struct("ClientCredentials")
            .field("client_id", &self.client_id)
            .field("credential", &method)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// The signing algorithms a private key may use.
pub const SIGNING_ALGORITHMS: [&str; 5] = ["ES256", "ES384", "RS256", "RS384", "RS512"];

fn algorithm(name: &str) -> Option<JwtSigningAlgorithm> {
    Some(match name {
        "ES256" => JwtSigningAlgorithm::ES256,
        "ES384" => JwtSigningAlgorithm::ES384,
        "RS256" => JwtSigningAlgorithm::RS256,
        "RS384" => JwtSigningAlgorithm::RS384,
        "RS512" => JwtSigningAlgorithm::RS512,
        _ => return None,
    })
}

/// An access token for the server at `url` within `limit`, or why there
/// is none (in words, naming no secret). rmcp's OAuth future is not
/// `Send`, so it runs on a runtime of its own on a blocking thread.
pub(super) async fn access_token(
    url: &str,
    credentials: &ClientCredentials,
    limit: std::time::Duration,
) -> Result<String, String> {
    let url = url.to_owned();
    let credentials = credentials.clone();
    let task = tokio::task::spawn_blocking(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|err| format!("its runtime could not be made: {err}"))?;
        runtime.block_on(async {
            match tokio::time::timeout(limit, token(&url, &credentials)).await {
                Ok(answer) => answer,
                Err(_) => Err(format!(
                    "no access token came within {} s",
                    limit.as_secs_f64()
                )),
            }
        })
    });
    task.await
        .unwrap_or_else(|_| Err("the task that asked for it failed".to_owned()))
}

async fn token(url: &str, credentials: &ClientCredentials) -> Result<String, String> {
    let config = match &credentials.credential {
        Credential::Secret(secret) => ClientCredentialsConfig::ClientSecret {
            client_id: credentials.client_id.clone(),
            client_secret: secret.clone(),
            scopes: credentials.scopes.clone(),
            resource: Some(url.to_owned()),
        },
        Credential::PrivateKey {
            pem,
            algorithm: name,
        } => {
            let Some(signing_algorithm) = algorithm(name) else {
                return Err(format!(
                    "`{name}` is not a signing algorithm the harness knows ({})",
                    SIGNING_ALGORITHMS.join(", ")
                ));
            };
            ClientCredentialsConfig::PrivateKeyJwt {
                client_id: credentials.client_id.clone(),
                signing_key: pem.as_bytes().to_vec(),
                signing_algorithm,
                token_endpoint_audience: None,
                scopes: credentials.scopes.clone(),
                resource: Some(url.to_owned()),
            }
        }
    };
    let mut state = OAuthState::new(url, None).await.map_err(|e| failure(&e))?;
    state
        .authenticate_client_credentials(config)
        .await
        .map_err(|e| failure(&e))?;
    let Some(manager) = state.into_authorization_manager() else {
        return Err("the authorization ended without a token".to_owned());
    };
    manager.get_access_token().await.map_err(|e| failure(&e))
}

/// An OAuth failure in words.
fn failure(error: &AuthError) -> String {
    let text = match error {
        AuthError::NoAuthorizationSupport => {
            "the server advertises no OAuth authorization server (no protected resource \
             metadata)"
                .to_owned()
        }
        AuthError::HttpError(err) => {
            format!("the OAuth request failed: {}", super::wording::sources(err))
        }
        other => super::wording::sources(other),
    };
    visible_text(text.trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn debug_names_no_secret() {
        let secret = ClientCredentials {
            client_id: "c".to_owned(),
            credential: Credential::Secret("hunter2".to_owned()),
            scopes: vec!["read".to_owned()],
        };
        assert_eq!(
            format!("{secret:?}"),
            r#"ClientCredentials { client_id: "c", credential: "client_secret", scopes: ["read"] }"#
        );
        let key = ClientCredentials {
            credential: Credential::PrivateKey {
                pem: "-----BEGIN PRIVATE KEY-----".to_owned(),
                algorithm: "ES256".to_owned(),
            },
            ..secret
        };
        assert_eq!(
            format!("{key:?}"),
            r#"ClientCredentials { client_id: "c", credential: "private_key_jwt ES256", scopes: ["read"] }"#
        );
    }
}
