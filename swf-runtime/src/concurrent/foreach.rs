//! The iterations of a foreach task.

use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;
use tokio::time::Instant;

use super::ScopeEnd;
use super::branches::ScopeFuture;
use crate::error::WorkflowError;

/// How the iterations of a foreach task ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Iterated {
    /// The output of each iteration, in item order. When an iteration terminated the instance,
    /// only the iterations that completed before it, still in item order.
    pub outputs: Vec<Value>,
    /// The output of the iteration that reached a `terminate` end, which ends the instance.
    pub terminated: Option<Value>,
}

/// Runs `body(index, item)` for each of `items`, at most `max` at once (0: no limit), starting
/// them in item order with at least `time_delay` between the starts of consecutive iterations
/// (the first starts at once). An iteration that fails or reaches a `terminate` end stops
/// everything: the iterations still running are dropped (cancelled) and none starts after it.
///
/// # Errors
/// The first error of an iteration.
pub async fn for_each<'a, B>(
    items: Vec<Value>,
    max: usize,
    time_delay: Option<Duration>,
    mut body: B,
) -> Result<Iterated, WorkflowError>
where
    B: FnMut(usize, Value) -> ScopeFuture<'a>,
{
    let limit = if max == 0 { usize::MAX } else { max };
    let mut outputs: Vec<Option<Value>> = items.iter().map(|_| None).collect();
    let mut pending = items.into_iter().enumerate().peekable();
    let mut running = FuturesUnordered::new();
    let mut next_start = Instant::now();
    loop {
        let now = Instant::now();
        if running.len() < limit
            && now >= next_start
            && let Some((index, item)) = pending.next()
        {
            let iteration = body(index, item);
            running.push(async move { (index, iteration.await) });
            next_start = time_delay
                .and_then(|delay| now.checked_add(delay))
                .unwrap_or(now);
            continue;
        }
        let delayed = running.len() < limit && pending.peek().is_some();
        let finished = if delayed && running.is_empty() {
            tokio::time::sleep_until(next_start).await;
            continue;
        } else if delayed {
            tokio::select! {
                biased;
                finished = running.next() => finished,
                () = tokio::time::sleep_until(next_start) => continue,
            }
        } else {
            running.next().await
        };
        let Some((index, end)) = finished else {
            break;
        };
        match end? {
            ScopeEnd::Completed(output) => {
                if let Some(slot) = outputs.get_mut(index) {
                    *slot = Some(output);
                }
            }
            ScopeEnd::Terminated(output) => {
                return Ok(Iterated {
                    outputs: outputs.into_iter().flatten().collect(),
                    terminated: Some(output),
                });
            }
        }
    }
    Ok(Iterated {
        // Every slot is filled here: the loop only ends once all iterations completed.
        outputs: outputs.into_iter().map(Option::unwrap_or_default).collect(),
        terminated: None,
    })
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use serde_json::json;
    use tokio::time::sleep;

    use super::*;
    use crate::error::ErrorObject;

    type Log = Arc<Mutex<Vec<(usize, &'static str, Duration)>>>;

    /// A body whose iteration `i` takes `durations[i]` seconds and logs its start and end
    /// times, then ends as `ends(i)` says.
    fn body(
        durations: &'static [u64],
        log: &Log,
        ends: fn(usize, Value) -> Result<ScopeEnd, WorkflowError>,
    ) -> impl FnMut(usize, Value) -> ScopeFuture<'static> {
        let log = log.clone();
        let origin = Instant::now();
        move |index, item| {
            let log = log.clone();
            Box::pin(async move {
                let record = |what| {
                    if let Ok(mut log) = log.lock() {
                        log.push((index, what, origin.elapsed()));
                    }
                };
                record("start");
                let secs = durations.get(index).copied().unwrap_or(0);
                sleep(Duration::from_secs(secs)).await;
                record("end");
                ends(index, item)
            })
        }
    }

    fn doubled(_: usize, item: Value) -> Result<ScopeEnd, WorkflowError> {
        Ok(ScopeEnd::Completed(json!(item.as_i64().unwrap_or(0) * 2)))
    }

    fn starts(log: &Log) -> Vec<(usize, u64)> {
        let log = log.lock().map(|log| log.clone()).unwrap_or_default();
        log.into_iter()
            .filter(|(_, what, _)| *what == "start")
            .map(|(index, _, at)| (index, at.as_secs()))
            .collect()
    }

    const SECS: Duration = Duration::from_secs(1);

    #[tokio::test(start_paused = true)]
    async fn at_most_max_at_once_with_a_delay_between_starts() {
        let log = Log::default();
        let items = vec![json!(1), json!(2), json!(3), json!(4), json!(5)];
        // Durations 5, 1, 3, 1, 1 seconds, max 2, 2 seconds between starts:
        // 0 starts at 0, 1 at 2 (delay), 1 ends at 3 and 2 starts at 4 (delay since 1's start),
        // 0 ends at 5 and 3 starts at 6, 3 ends at 7, 2 ends at 7, 4 starts at 8.
        let started = Instant::now();
        let iterated = for_each(
            items,
            2,
            Some(2 * SECS),
            body(&[5, 1, 3, 1, 1], &log, doubled),
        )
        .await;
        assert_eq!(starts(&log), [(0, 0), (1, 2), (2, 4), (3, 6), (4, 8)]);
        assert_eq!(started.elapsed(), 9 * SECS);
        assert_eq!(
            iterated,
            Ok(Iterated {
                outputs: vec![json!(2), json!(4), json!(6), json!(8), json!(10)],
                terminated: None,
            })
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_free_slot_waits_for_the_delay_and_a_delay_for_a_slot() {
        let log = Log::default();
        let items = vec![json!(1), json!(2), json!(3), json!(4)];
        // Durations 10, 10, 1, 1 with max 2 and a 1 second delay: 0 at 0, 1 at 1; no slot until
        // 0 ends at 10: 2 at 10, 2 ends at 11 and 3 starts at 11.
        let iterated = for_each(items, 2, Some(SECS), body(&[10, 10, 1, 1], &log, doubled)).await;
        assert_eq!(starts(&log), [(0, 0), (1, 1), (2, 10), (3, 11)]);
        assert!(iterated.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn unbounded_without_delay_starts_everything_at_once() {
        let log = Log::default();
        let started = Instant::now();
        let items = vec![json!(1), json!(2), json!(3)];
        let iterated = for_each(items, 0, None, body(&[3, 2, 1], &log, doubled)).await;
        assert_eq!(starts(&log), [(0, 0), (1, 0), (2, 0)]);
        assert_eq!(started.elapsed(), 3 * SECS);
        assert_eq!(
            iterated.map(|iterated| iterated.outputs),
            Ok(vec![json!(2), json!(4), json!(6)])
        );
        let empty = for_each(Vec::new(), 2, Some(SECS), body(&[], &log, doubled)).await;
        assert_eq!(
            empty,
            Ok(Iterated {
                outputs: Vec::new(),
                terminated: None,
            })
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_error_stops_everything() {
        fn second_fails(index: usize, item: Value) -> Result<ScopeEnd, WorkflowError> {
            if index == 1 {
                Err(WorkflowError::new(
                    "wf",
                    "Each",
                    ErrorObject::new("Bad", "no"),
                    item,
                ))
            } else {
                doubled(index, item)
            }
        }
        let log = Log::default();
        let items = vec![json!(1), json!(2), json!(3), json!(4)];
        let iterated = for_each(items, 2, None, body(&[5, 1, 1, 1], &log, second_fails)).await;
        assert_eq!(
            iterated.map_err(|e| e.error().name.clone()),
            Err(String::from("Bad"))
        );
        sleep(100 * SECS).await;
        let log = log.lock().map(|log| log.clone()).unwrap_or_default();
        assert_eq!(
            log,
            [
                (0, "start", Duration::ZERO),
                (1, "start", Duration::ZERO),
                (1, "end", SECS)
            ],
            "iteration 0 was cancelled and 2 never started"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn terminate_stops_everything_and_keeps_the_completed_outputs() {
        fn third_terminates(index: usize, item: Value) -> Result<ScopeEnd, WorkflowError> {
            if index == 2 {
                Ok(ScopeEnd::Terminated(json!("stop")))
            } else {
                doubled(index, item)
            }
        }
        let log = Log::default();
        let items = vec![json!(1), json!(2), json!(3), json!(4)];
        let iterated = for_each(items, 0, None, body(&[1, 9, 2, 9], &log, third_terminates)).await;
        assert_eq!(
            iterated,
            Ok(Iterated {
                outputs: vec![json!(2)],
                terminated: Some(json!("stop")),
            })
        );
        sleep(100 * SECS).await;
        let ends = log
            .lock()
            .map(|log| log.iter().filter(|(_, what, _)| *what == "end").count())
            .unwrap_or_default();
        assert_eq!(ends, 2, "iterations 1 and 3 were cancelled");
    }
}
