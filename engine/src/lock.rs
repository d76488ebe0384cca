//! The estate lock, kept in the live system itself: an SSM parameter
//! `/choudoufu/lock/<estate>` created only if it does not exist, holding
//! who holds the lock. Two applies of one estate cannot both proceed; the
//! second waits up to `-lock-timeout`, then fails naming the holder. A lock
//! left by a killed run is broken with `force-unlock LOCK_ID`.
//!
//! The lock carries a `tofu-lock` tag, never the estate's marker, so the
//! sweep never takes it for an orphan.

use crate::provider::grpc::GrpcProvider;
use crate::provider::proposed::proposed_new;
use crate::provider::schema::Schema;
use crate::provider::{Provider, ProviderError, ResourceState};
use crate::value::{Type, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const TYPE: &str = "aws_ssm_parameter";

/// Who holds a lock.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Holder {
    #[serde(rename = "ID")]
    pub id: String,
    #[serde(rename = "Operation")]
    pub operation: String,
    #[serde(rename = "Who")]
    pub who: String,
    #[serde(rename = "Created")]
    pub created: String,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Lock Info:\n  ID:        {}\n  Operation: {}\n  Who:       {}\n  Created:   {}",
            self.id, self.operation, self.who, self.created
        )
    }
}

/// Why the lock could not be taken or broken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("Error acquiring the estate lock: estate \"{estate}\" is locked by another run.\n\n{holder}\n\nchoudoufu waited {waited:?}. Wait for that run to finish; if it was killed and nothing holds the lock, break it with: choudoufu force-unlock {}", holder.id)]
    Held {
        estate: String,
        holder: Holder,
        waited: Duration,
    },
    #[error("the lock of estate \"{estate}\" has ID {actual}, not {given}; nothing was unlocked")]
    OtherId {
        estate: String,
        actual: String,
        given: String,
    },
    #[error("estate \"{estate}\" is not locked")]
    NotLocked { estate: String },
    #[error("the estate lock: {0}")]
    Provider(#[from] ProviderError),
    #[error("the estate lock needs the aws provider's {TYPE} schema")]
    NoSchema,
}

/// A held lock; release it when the run ends.
pub struct Lock {
    provider: GrpcProvider,
    schema: Arc<Schema>,
    state: ResourceState,
}

fn name(estate: &str) -> String {
    format!("/choudoufu/lock/{estate}")
}

fn config(schema: &Schema, estate: &str, holder: &Holder) -> Value {
    let tags = Value::map(
        Type::String,
        BTreeMap::from([("tofu-lock".to_string(), Value::string(estate))]),
    );
    schema.block.value_with(BTreeMap::from([
        ("name".to_string(), Value::string(name(estate))),
        ("type".to_string(), Value::string("String")),
        (
            "value".to_string(),
            Value::string(serde_json::to_string(holder).expect("holders serialize")),
        ),
        (
            "description".to_string(),
            Value::string("Held by a choudoufu run; see choudoufu force-unlock."),
        ),
        ("tags".to_string(), tags),
    ]))
}

/// Reads who holds the estate's lock, if anyone.
pub async fn holder(
    provider: &mut GrpcProvider,
    estate: &str,
) -> Result<Option<(Holder, ResourceState)>, LockError> {
    let state = match crate::bind::import_read(provider, TYPE, &name(estate)).await {
        Ok(Some(state)) => state,
        Ok(None) => return Ok(None),
        // The holder let go between the provider's reads of the parameter
        // and of its tags.
        Err(e) if vanished(&e) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let text = state
        .value
        .get("value")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let holder = serde_json::from_str(text).unwrap_or_else(|_| Holder {
        id: "unknown".into(),
        operation: "unknown".into(),
        who: text.to_string(),
        created: String::new(),
    });
    Ok(Some((holder, state)))
}

/// Takes the estate's lock for `operation`, waiting up to `timeout` for a
/// holder to let go; `waiting` is told once who holds it when it must wait.
pub async fn acquire(
    provider: &GrpcProvider,
    estate: &str,
    operation: &str,
    timeout: Duration,
    waiting: impl FnOnce(&Holder),
) -> Result<Lock, LockError> {
    let mut waiting = Some(waiting);
    let mut provider = provider.clone();
    let schema = provider
        .cached_schema()
        .and_then(|s| s.resources.get(TYPE).cloned())
        .map(Arc::new)
        .ok_or(LockError::NoSchema)?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let me = Holder {
        id: format!(
            "{:08x}-{:04x}-{:08x}",
            now.as_secs(),
            std::process::id() & 0xffff,
            now.subsec_nanos()
        ),
        operation: operation.to_string(),
        who: format!(
            "{}@{}",
            std::env::var("USER").unwrap_or_else(|_| "unknown".into()),
            std::fs::read_to_string("/proc/sys/kernel/hostname")
                .unwrap_or_default()
                .trim()
        ),
        created: crate::eval::funcs::rfc3339_utc(now.as_secs() as i64),
    };
    let config = config(&schema, estate, &me);
    let null = ResourceState {
        value: Value::null(schema.block.implied_type().without_optional()),
        private: Vec::new(),
    };
    let started = Instant::now();
    loop {
        let proposed = proposed_new(&schema.block, &null.value, &config);
        let planned = provider
            .plan_resource_change(TYPE, &null, &proposed, &config)
            .await?;
        // The provider creates the parameter without overwriting: a
        // parameter already there fails the create.
        match provider
            .apply_resource_change(TYPE, &null.value, &planned, &config)
            .await
        {
            Ok(Some(state)) => {
                return Ok(Lock {
                    provider,
                    schema,
                    state,
                })
            }
            Ok(None) => {
                return Err(LockError::NotLocked {
                    estate: estate.into(),
                })
            }
            Err(e) if already_exists(&e) => {
                let held = holder(&mut provider, estate).await?;
                // The create landed but its answer was lost and the retry
                // found the parameter: the lock is ours.
                if let Some((holder, state)) = &held {
                    if holder == &me {
                        return Ok(Lock {
                            provider,
                            schema,
                            state: state.clone(),
                        });
                    }
                }
                let waited = started.elapsed();
                if waited >= timeout {
                    if let Some((holder, _)) = held {
                        return Err(LockError::Held {
                            estate: estate.into(),
                            holder,
                            waited,
                        });
                    }
                }
                if let (Some((holder, _)), Some(tell)) = (&held, waiting.take()) {
                    tell(holder);
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

fn already_exists(e: &ProviderError) -> bool {
    e.to_string().to_lowercase().contains("already exists")
}

/// Whether a read failed because the parameter went away while it was read.
fn vanished(e: &ProviderError) -> bool {
    let text = e.to_string();
    text.contains("InvalidResourceId") || text.contains("ParameterNotFound")
}

impl Lock {
    /// The lock's ID, as `force-unlock` takes it.
    pub fn id(&self) -> String {
        let text = self
            .state
            .value
            .get("value")
            .and_then(Value::as_str)
            .unwrap_or_default();
        serde_json::from_str::<Holder>(text)
            .map(|h| h.id)
            .unwrap_or_default()
    }

    /// Lets go of the lock.
    pub async fn release(mut self) -> Result<(), LockError> {
        crate::apply::destroy_state(&mut self.provider, TYPE, &self.state, &self.schema).await?;
        Ok(())
    }
}

/// Breaks the estate's lock if its ID is `id`.
pub async fn force_unlock(
    provider: &GrpcProvider,
    estate: &str,
    id: &str,
) -> Result<Holder, LockError> {
    let mut provider = provider.clone();
    let schema = provider
        .cached_schema()
        .and_then(|s| s.resources.get(TYPE).cloned())
        .ok_or(LockError::NoSchema)?;
    let Some((holder, state)) = holder(&mut provider, estate).await? else {
        return Err(LockError::NotLocked {
            estate: estate.into(),
        });
    };
    if holder.id != id {
        return Err(LockError::OtherId {
            estate: estate.into(),
            actual: holder.id,
            given: id.into(),
        });
    }
    crate::apply::destroy_state(&mut provider, TYPE, &state, &schema).await?;
    Ok(holder)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Diagnostic;

    fn read_error(summary: &str) -> ProviderError {
        ProviderError::Diagnostics {
            binary: "terraform-provider-aws".into(),
            method: "ReadResource",
            diagnostics: vec![Diagnostic::error(summary, "")],
        }
    }

    #[test]
    fn a_lock_let_go_mid_read_is_no_lock() {
        // What the aws provider 5.100.0 reports when the parameter is
        // deleted between its GetParameter and its ListTagsForResource.
        let gone = read_error(
            "listing tags for SSM (Systems Manager) Parameter (/choudoufu/lock/x): \
             operation error SSM: ListTagsForResource, https response error StatusCode: 400, \
             RequestID: r, InvalidResourceId: ",
        );
        assert!(vanished(&gone));
        assert!(!vanished(&read_error(
            "operation error SSM: GetParameter, exceeded maximum number of attempts"
        )));
    }
}
