//! Running one action: the user's function under the action's timeout.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;

use crate::error::{ErrorObject, FunctionError};

/// Awaits `call` (the user's function) for at most `timeout`.
///
/// A [`FunctionError`] becomes an [`ErrorObject`] with the same name, message and trace, so
/// `onError` and `retry` expressions see what the function reported. When the timeout elapses
/// first, the call is dropped (cancelled) and a `TimeoutError` is returned, which the task handles
/// like any other error. `timeout_text` is the duration as written in the workflow (`PT15M`), so
/// the message speaks the user's words.
///
/// # Errors
/// The function's error, or a `TimeoutError`.
pub async fn call_action<F>(
    call: F,
    timeout: Option<Duration>,
    timeout_text: &str,
    task: &str,
    action: &str,
) -> Result<Value, ErrorObject>
where
    F: Future<Output = Result<Value, FunctionError>>,
{
    let outcome = match timeout {
        None => call.await,
        Some(limit) => match tokio::time::timeout(limit, call).await {
            Ok(outcome) => outcome,
            Err(_elapsed) => {
                return Err(ErrorObject::new(
                    ErrorObject::TIMEOUT,
                    format!(
                        "action `{action}` of task `{task}` did not complete within {timeout_text}"
                    ),
                ));
            }
        },
    };
    outcome.map_err(ErrorObject::from)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tokio::time::{Instant, sleep};

    use super::*;

    const LIMIT: Duration = Duration::from_secs(5);

    async fn slow(after: Duration) -> Result<Value, FunctionError> {
        sleep(after).await;
        Ok(json!({"done": true}))
    }

    #[tokio::test(start_paused = true)]
    async fn the_timeout_fires_exactly_at_the_limit() {
        let started = Instant::now();
        let result = call_action(
            slow(Duration::from_secs(60)),
            Some(LIMIT),
            "PT5S",
            "Check",
            "inventory",
        )
        .await;
        assert_eq!(started.elapsed(), LIMIT);
        assert_eq!(
            result,
            Err(ErrorObject::new(
                ErrorObject::TIMEOUT,
                "action `inventory` of task `Check` did not complete within PT5S"
            ))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_that_finishes_in_time_returns_its_value() {
        let started = Instant::now();
        let result = call_action(
            slow(Duration::from_secs(4)),
            Some(LIMIT),
            "PT5S",
            "Check",
            "inventory",
        )
        .await;
        assert_eq!(started.elapsed(), Duration::from_secs(4));
        assert_eq!(result, Ok(json!({"done": true})));
    }

    #[tokio::test(start_paused = true)]
    async fn without_a_timeout_the_call_may_take_any_time() {
        let result = call_action(
            slow(Duration::from_secs(86_400)),
            None,
            "",
            "Check",
            "inventory",
        )
        .await;
        assert_eq!(result, Ok(json!({"done": true})));
    }

    #[test]
    fn the_future_is_send_when_the_call_is() {
        // Generated machines are spawned on multi-threaded runtimes.
        fn assert_send<T: Send>(_: &T) {}
        let future = call_action(slow(LIMIT), Some(LIMIT), "PT5S", "Check", "inventory");
        assert_send(&future);
        let progress = crate::RetryProgress::default();
        assert_send(&progress.wait());
    }

    #[tokio::test(start_paused = true)]
    async fn function_errors_keep_their_properties() {
        let failing =
            async { Err(FunctionError::named("OutOfStock", "no more apples").with_trace("t")) };
        let result = call_action(failing, Some(LIMIT), "PT5S", "Check", "inventory").await;
        assert_eq!(
            result,
            Err(ErrorObject::new("OutOfStock", "no more apples").with_trace("t"))
        );
    }
}
