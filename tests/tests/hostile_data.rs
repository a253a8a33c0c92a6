//! Nothing the data brings panics or hangs the runtime: workflow inputs, function results,
//! function errors and saved states, drawn at random (from fixed seeds, so that a failure
//! reproduces) and run through the compiled workflows of the other tests that need no events:
//! they filter, merge, switch, loop, branch, retry, time out, compensate and check schemas, in
//! every dialect, the property test's generated batch among them. Those whose tasks or
//! branches have schedules run on an `Io` whose clock each case sets before, inside or after
//! their windows.
//! Every case ends in an output, a `WorkflowError` or the step limit, never a panic or a step
//! that does not return; between steps every state is saved and read back unchanged, and a
//! saved state with one value replaced is either refused or steps without a panic or a hang.
//! The workflows that consume or produce events run on a `Host` fed random CloudEvents: every
//! instance ends once, none by a panic, and the host returns once the events stop. Five of them
//! also run on a durable host over SQLite and PostgreSQL, fed events whose ids, sources and
//! correlation values are now and then odd: only an event holding text no store holds is
//! refused (as `Invalid`), nothing fails in a store, no step panics.
//! `SWF_HOSTILE_CASES` sets the cases per workflow (150; a fifth as many host runs, a thirtieth
//! as many durable ones).

use std::fmt::Debug;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde::de::DeserializeOwned;
use swf_runtime::{CustomCondition, FunctionError, Value, WorkflowError, json, serde_json};

/// Cases per workflow; `SWF_HOSTILE_CASES` runs more (the seeds of the first ones are the same).
fn cases() -> u64 {
    std::env::var("SWF_HOSTILE_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(150)
}

/// Steps a case may run before it is counted as one that does not end (a loop the data keeps
/// going is allowed: it must only not panic).
const STEP_LIMIT: usize = 60;

/// xorshift64*: enough to spread the cases, and no dependency for it.
struct Random(u64);

impl Random {
    fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, bound: usize) -> usize {
        usize::try_from(self.next() % bound as u64).expect("below a usize")
    }

    fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    fn pick<'a, T>(&mut self, from: &'a [T]) -> &'a T {
        &from[self.below(from.len())]
    }
}

/// Scalars chosen to sit at the edges of what the runtime converts and compares.
fn scalar(random: &mut Random, words: &[String]) -> Value {
    match random.below(14) {
        0 => Value::Null,
        1 => json!(random.chance(2)),
        2 => json!(i64::MIN),
        3 => json!(u64::MAX),
        4 => json!(-0.0),
        5 => json!(1e308),
        6 => json!(f64::MIN_POSITIVE),
        7 => json!(random.below(7)),
        8 => json!(-(random.below(1000) as i64)),
        9 => json!(""),
        10 => json!("\u{0}\u{202e}é\u{1F600}"),
        11 => json!(random.pick(&["$.a", "${ .a }", "5", "true", "null", "1e999", "[]"])),
        12 => json!(random.pick(words)),
        _ => json!(random.next() as f64 / 7.0),
    }
}

/// A value of at most `depth` levels whose keys are mostly the words of the workflow, so that
/// its paths and conditions find members of every kind.
fn value(random: &mut Random, words: &[String], depth: usize) -> Value {
    if depth == 0 || random.chance(3) {
        return scalar(random, words);
    }
    if random.chance(3) {
        let length = random.below(5);
        return Value::Array(
            (0..length)
                .map(|_| value(random, words, depth - 1))
                .collect(),
        );
    }
    object(random, words, depth)
}

fn object(random: &mut Random, words: &[String], depth: usize) -> Value {
    let members = random.below(6);
    let mut object = serde_json::Map::new();
    for _ in 0..members {
        let key = if random.chance(8) {
            String::from(*random.pick(&["", "a b", "é", "0", "-1", "$"]))
        } else {
            random.pick(words).clone()
        };
        object.insert(key, value(random, words, depth.saturating_sub(1)));
    }
    Value::Object(object)
}

/// The identifiers of a workflow file: its members' names, function names, task names.
fn words_of(text: &str) -> Vec<String> {
    let mut words: Vec<String> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| word.chars().next().is_some_and(|c| c.is_ascii_alphabetic()))
        .map(str::to_owned)
        .collect();
    words.sort();
    words.dedup();
    words
}

/// Functions that answer with random values, or fail with random errors. Clones share their
/// draws: a workflow that starts branches detached owns a clone of its functions.
#[derive(Clone)]
struct Fuzzed {
    random: Arc<Mutex<Random>>,
    words: Arc<[String]>,
}

impl Fuzzed {
    fn new(words: Vec<String>) -> Self {
        Self {
            random: Arc::new(Mutex::new(Random::new(0))),
            words: words.into(),
        }
    }

    fn reseed(&self, seed: u64) {
        *self.random.lock().expect("not poisoned") = Random::new(seed);
    }

    fn answer(&self) -> Result<Value, FunctionError> {
        let mut random = self.random.lock().expect("not poisoned");
        if random.chance(5) {
            let name = random.pick(&["Again", "NotFound", "", "a b", "Boom"]);
            return Err(FunctionError::named(*name, "a random failure"));
        }
        Ok(if random.chance(4) {
            value(&mut random, &self.words, 3)
        } else {
            object(&mut random, &self.words, 3)
        })
    }

    fn decide(&self) -> bool {
        self.random.lock().expect("not poisoned").chance(2)
    }
}

/// Implements a workflow's functions trait with [`Fuzzed::answer`] for each method.
macro_rules! answered {
    ($functions:path { $($method:ident),* }) => {
        impl $functions for Fuzzed {
            $(
                async fn $method(&self, _args: Value) -> Result<Value, FunctionError> {
                    self.answer()
                }
            )*
        }
    };
}

/// Replaces one value somewhere in `saved` with a random one.
fn replace_one(saved: &mut Value, random: &mut Random, words: &[String]) {
    let inner = match saved {
        Value::Object(members) if !members.is_empty() && !random.chance(4) => {
            let at = random.below(members.len());
            members.values_mut().nth(at)
        }
        Value::Array(elements) if !elements.is_empty() && !random.chance(4) => {
            let at = random.below(elements.len());
            elements.get_mut(at)
        }
        _ => None,
    };
    match inner {
        Some(inner) => replace_one(inner, random, words),
        None => *saved = value(random, words, 2),
    }
}

/// Adds a member with a random value to an object somewhere in `data`, if it holds one.
fn add_one(data: &mut Value, random: &mut Random, words: &[String]) {
    match data {
        Value::Object(members) => {
            let at = random.below(members.len() + 1);
            match members.values_mut().nth(at) {
                Some(inner) if inner.is_object() || inner.is_array() => {
                    add_one(inner, random, words);
                }
                _ => {
                    let key = random.pick(words).clone();
                    members.insert(key, value(random, words, 2));
                }
            }
        }
        Value::Array(elements) if !elements.is_empty() => {
            let at = random.below(elements.len());
            add_one(&mut elements[at], random, words);
        }
        _ => {}
    }
}

/// What went wrong in one case.
#[derive(Debug)]
#[allow(dead_code, reason = "read through Debug in the assertion's message")]
struct Failure {
    workflow: &'static str,
    case: u64,
    what: String,
}

/// How the cases of one workflow ended, so that a workflow whose cases all stop at once (and
/// would test nothing) is seen.
#[derive(Debug, Default)]
struct Tally {
    refused: usize,
    completed: usize,
    failed: usize,
    step_limit: usize,
    steps: usize,
    changed_states_stepped: usize,
}

/// Runs the cases of one workflow: `start` and `step` are the generated methods, `output` the
/// state's. Most inputs are `seed_input` (one the workflow goes far with) with a few values
/// replaced or added; some are wholly random.
fn exercise<S, Start, Step, Fut>(
    subject: Subject,
    seed_input: &Value,
    functions: &Fuzzed,
    begin_case: impl Fn(&mut Random),
    start: Start,
    step: Step,
    output: fn(&S) -> Option<&Value>,
) -> (Vec<Failure>, Tally)
where
    S: Serialize + DeserializeOwned + PartialEq + Debug + Clone,
    Start: Fn(Value) -> Result<S, WorkflowError>,
    Step: Fn(S) -> Fut,
    Fut: Future<Output = Result<S, WorkflowError>>,
{
    let Subject { name: workflow, id } = subject;
    let runtime = paused_runtime();
    let mut failures = Vec::new();
    let mut tally = Tally::default();
    for case in 0..cases() {
        let seed = seed_of(workflow, case);
        functions.reseed(seed ^ 0xA5A5);
        let mut random = Random::new(seed);
        begin_case(&mut random);
        let input = if random.chance(8) {
            value(&mut random, &functions.words, 3)
        } else {
            let mut input = seed_input.clone();
            for _ in 0..random.below(4) {
                if random.chance(2) {
                    replace_one(&mut input, &mut random, &functions.words);
                } else {
                    add_one(&mut input, &mut random, &functions.words);
                }
            }
            input
        };
        let fail = |what: String| Failure {
            workflow,
            case,
            what,
        };
        let ran = std::panic::catch_unwind(AssertUnwindSafe(|| {
            runtime.block_on(async {
                let mut state = match start(input.clone()) {
                    Ok(state) => state,
                    Err(refusal) => {
                        tally.refused += 1;
                        return check_error(&refusal, id);
                    }
                };
                for _ in 0..STEP_LIMIT {
                    if output(&state).is_some() {
                        tally.completed += 1;
                        return Ok(());
                    }
                    let saved = serde_json::to_value(&state)
                        .map_err(|error| format!("the state was not saved: {error}"))?;
                    let saved_text = saved.to_string();
                    let restored: S = serde_json::from_value(saved.clone())
                        .map_err(|error| format!("the saved state was refused: {error}"))?;
                    if restored != state {
                        return Err(format!("the state came back changed from {saved}"));
                    }
                    if random.chance(3) {
                        let mut changed = saved;
                        replace_one(&mut changed, &mut random, &functions.words);
                        if let Ok(restored) = serde_json::from_value::<S>(changed.clone()) {
                            // Any outcome will do, but it must come.
                            let _outcome = bounded(step(restored)).await.map_err(|hang| {
                                format!("{hang}: from the changed state {changed}")
                            })?;
                            tally.changed_states_stepped += 1;
                        }
                    }
                    tally.steps += 1;
                    state = match bounded(step(state.clone()))
                        .await
                        .map_err(|hang| format!("{hang}: from {saved_text}"))?
                    {
                        Ok(next) => next,
                        Err(error) => {
                            tally.failed += 1;
                            return check_error(&error, id);
                        }
                    };
                }
                tally.step_limit += 1;
                Ok(())
            })
        }));
        match ran {
            Ok(Ok(())) => {}
            Ok(Err(what)) => failures.push(fail(format!("{what}; input {input}"))),
            Err(panic) => {
                let text = panic_text(panic.as_ref());
                failures.push(fail(format!("panicked: {text}; input {input}")));
            }
        }
    }
    (failures, tally)
}

/// A current-thread runtime whose time stands still until nothing else can run: delays,
/// retries and timeouts pass at once, in the same order as in real time.
fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .expect("a runtime")
}

/// The seed of case `case` of `workflow`: the same on every run.
fn seed_of(workflow: &str, case: u64) -> u64 {
    case.wrapping_add(workflow.len() as u64 * 1_000_003)
}

/// What a panic said.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|text| (*text).to_owned()))
        .unwrap_or_default()
}

/// Longer than any wait of these workflows (their delays and retries last seconds), in
/// tokio's paused time, which jumps to it at once when nothing else can run: a step that
/// has not returned by then never will.
const NEVER: std::time::Duration = std::time::Duration::from_secs(365 * 24 * 3600);

/// `step`, or an error if it never returns.
async fn bounded<T>(step: impl Future<Output = T>) -> Result<T, String> {
    tokio::time::timeout(NEVER, step)
        .await
        .map_err(|_| String::from("a step never returned"))
}

/// A workflow error says what happened and whose it is: its error object has a message (the
/// display around it always has words) and it names its workflow, `id`.
fn check_error(error: &WorkflowError, id: &str) -> Result<(), String> {
    if error.error().message.trim().is_empty() {
        return Err(format!("an error without a message: {error:?}"));
    }
    if error.workflow() != id {
        return Err(format!(
            "an error that names another workflow than `{id}`: {error}"
        ));
    }
    Ok(())
}

/// The workflow a run of cases is for: its name in the report and its id.
struct Subject {
    name: &'static str,
    id: &'static str,
}

/// The times a `with_io` workflow's clock is set to: before, inside and after the windows of
/// the schedules of its tasks and branches.
const CLOCKS: &[&str] = &[
    "2019-01-01T00:00:00Z",
    "2020-03-20T12:59:59Z",
    "2020-03-20T13:00:01Z",
    "2024-06-01T00:00:00Z",
    "2030-06-01T00:00:00Z",
];

fn time(text: &str) -> swf_runtime::Timestamp {
    text.parse().expect("a time of CLOCKS")
}

/// Declares a module per workflow, its functions, and the function `$list` that runs the cases
/// of every one: `plain` ones step by step (`exercise`), `events` ones on a host
/// (`exercise_with_events`). A workflow's seed input is `{}` unless given after its functions.
macro_rules! hostile {
    (@run plain, $name:expr, $input:expr, $functions:expr, $module:ident :: $workflow:ident) => {{
        let machine = $module::$workflow::new($functions);
        exercise(
            Subject { name: $name, id: $module::$workflow::<Fuzzed>::ID },
            $input,
            machine.functions(),
            |_| {},
            |input| machine.start(input),
            |state| machine.step(state),
            |state| state.output(),
        )
    }};
    (@run with_io, $name:expr, $input:expr, $functions:expr, $module:ident :: $workflow:ident) => {{
        let machine = &$module::$workflow::new($functions);
        let clock = Arc::new(swf_runtime::ManualClock::new(time(CLOCKS[0])));
        let io = std::cell::RefCell::new(swf_runtime::Io::standalone());
        exercise(
            Subject { name: $name, id: $module::$workflow::<Fuzzed>::ID },
            $input,
            machine.functions(),
            // Each case on an `Io` of its own, its clock at one of the times around the
            // workflows' schedules.
            |random| {
                let at: &&str = random.pick(CLOCKS);
                clock.set(time(at));
                *io.borrow_mut() = swf_runtime::Io::standalone_with_clock(clock.clone());
            },
            |input| machine.start_with(input, &io.borrow()),
            |state| {
                let io = io.borrow().clone();
                async move { machine.step_with(state, &io).await }
            },
            |state| state.output(),
        )
    }};
    (@run events, $name:expr, $input:expr, $functions:expr, $module:ident :: $workflow:ident) => {{
        let functions = $functions;
        let subject = Subject { name: $name, id: $module::$workflow::<Fuzzed>::ID };
        exercise_with_events(subject, $input, &functions, || {
            $module::$workflow::new(functions.clone())
        })
    }};
    (@input) => {
        json!({})
    };
    (@input $input:expr) => {
        $input
    };
    ($kind:ident $list:ident; $(
        $module:ident: $file:literal, $workflow:ident, $functions:ident { $($method:ident),* }
        $(, $input:expr)?;
    )*) => {
        $(
            mod $module {
                swf_runtime::workflow!($file);
            }
            answered!($module::$functions { $($method),* });
        )*

        fn $list() -> Vec<Outcomes> {
            let mut outcomes = Vec::new();
            $(
                let text = include_str!(concat!("../", $file));
                let functions = Fuzzed::new(words_of(text));
                let name = stringify!($module);
                let input = hostile!(@input $($input)?);
                let (failures, tally) =
                    hostile!(@run $kind, name, &input, functions, $module::$workflow);
                outcomes.push((name, failures, tally));
            )*
            outcomes
        }
    };
}

/// How one workflow's cases went.
type Outcomes = (&'static str, Vec<Failure>, Tally);

/// Prints how each workflow's cases ended, and fails if any case failed.
fn report(outcomes: &[Outcomes]) {
    for (workflow, _, tally) in outcomes {
        eprintln!("{workflow}: {tally:?}");
    }
    let failures: Vec<&Failure> = outcomes
        .iter()
        .flat_map(|(_, failures, _)| failures)
        .collect();
    assert!(
        failures.is_empty(),
        "{} failing cases, the first ones: {:#?}",
        failures.len(),
        &failures[..failures.len().min(8)]
    );
}

hostile! {
    plain every_workflow;
    filters: "workflows/runtime/filters.sw.yaml", FiltersWorkflow, FiltersFunctions { greet, echo },
        json!({"name": "Ada", "count": 2});
    merges: "workflows/runtime/merges.sw.yaml", MergesWorkflow, MergesFunctions { give };
    results: "workflows/runtime/results.sw.yaml", ResultsWorkflow, ResultsFunctions { give },
        json!({"list": [{"value": 0}, {"value": 1}], "a": {"b": {}}});
    switch_route: "workflows/runtime/switch-route.sw.yaml", SwitchRouteWorkflow, SwitchRouteFunctions {};
    inject: "workflows/runtime/inject.sw.yaml", InjectWorkflow, InjectFunctions {};
    jsonpath_default: "workflows/runtime/jsonpath-default.sw.yaml", JsonpathDefaultWorkflow, JsonpathDefaultFunctions {},
        json!({"items": [{"ok": true}, {"ok": false}]});
    draft_filters: "workflows/runtime/draft-filters.sw.yaml", DraftFiltersWorkflow, DraftFiltersFunctions {};
    spel: "workflows/runtime/spel.sw.yaml", SpelWorkflow, SpelFunctions {},
        json!({"n": 10, "s": "abc", "flag": false, "t": true, "list": [1, 3], "level": "high", "count": 2});
    guards: "workflows/runtime/guards.sw.yaml", GuardsWorkflow, GuardsFunctions {},
        json!({"vip": true, "customer": {"tier": "gold"}});
    on_error: "workflows/runtime/on-error.sw.yaml", OnErrorWorkflow, OnErrorFunctions { work, inspect };
    sequential: "workflows/runtime/sequential.sw.yaml", SequentialWorkflow, SequentialFunctions { first, second };
    strict_paths: "workflows/runtime/strict-paths.sw.yaml", StrictPathsWorkflow, StrictPathsFunctions { charge };
    transitions: "workflows/runtime/transitions.sw.yaml", TransitionsWorkflow, TransitionsFunctions { lookup, approve };
    retries: "workflows/runtime/retries.sw.yaml", RetriesWorkflow, RetriesFunctions { prepare, charge };
    parallel: "workflows/runtime/parallel.sw.yaml", ParallelActionsWorkflow, ParallelActionsFunctions { slow, fast };
    foreach: "workflows/concurrency/foreach.sw.yaml", ForeachWorkflow, ForeachFunctions { work },
        json!({"items": [{"name": "a", "secs": 1}, {"name": "b", "secs": 2}]});
    foreach_shared: "workflows/concurrency/foreach-shared.sw.yaml", ForeachSharedWorkflow, ForeachSharedFunctions { work },
        json!({"items": [{"name": "a", "result": 1}, {"name": "b", "result": {"x": [1]}}]});
    parallel_shared: "workflows/concurrency/parallel-shared.sw.yaml", ParallelSharedWorkflow, ParallelSharedFunctions { work },
        json!({"items": [1, 2], "route": "left"});
    saga: "workflows/compensation/saga.sw.yaml", SagaWorkflow, SagaFunctions { book, charge, cancel };
    v01_filters: "workflows/v01/filters.sw.yaml", V01FiltersWorkflow, V01FiltersFunctions { greet, count };
    v01_loop_collect: "workflows/v01/loop_collect.sw.yaml", V01LoopCollectWorkflow, V01LoopCollectFunctions { price },
        json!({"items": [{"name": "a"}, {"name": "b"}]});
    v01_choices: "workflows/v01/choices.sw.yaml", V01ChoicesWorkflow, V01ChoicesFunctions {};
    fruits_only: "workflows/conformance/fruits_only.sw.yaml", FruitsOnlyWorkflow, FruitsOnlyFunctions {};
    inject_people: "workflows/conformance/inject_people.sw.yaml", InjectPeopleWorkflow, InjectPeopleFunctions {};
    vegetables: "workflows/conformance/vegetables_first_way.sw.yaml", VegetablesFirstWayWorkflow, VegetablesFirstWayFunctions {};
    comp_scopes: "workflows/compensation/scopes.sw.yaml", ScopesWorkflow, ScopesFunctions { note };
    completion: "workflows/concurrency/completion.sw.yaml", CompletionWorkflow, CompletionFunctions { work },
        json!({"items": [1, 2]});
    branches: "workflows/concurrency/branches.sw.yaml", BranchesWorkflow, BranchesFunctions { work };
    failing: "workflows/concurrency/failing.sw.yaml", FailingWorkflow, FailingFunctions { work };
    parallel_timeouts: "workflows/concurrency/timeouts.sw.yaml", ParallelTimeoutsWorkflow, ParallelTimeoutsFunctions { work };
    within: "workflows/concurrency/within.sw.yaml", WithinLimitsWorkflow, WithinLimitsFunctions { work };
    foreach_max: "workflows/concurrency/foreach-max.sw.yaml", ForeachMaxWorkflow, ForeachMaxFunctions { work },
        json!({"items": [{"name": "a", "secs": 1}, {"name": "b", "secs": 2}, {"name": "c", "secs": 1}]});
    foreach_delay: "workflows/concurrency/foreach-delay.sw.yaml", ForeachDelayWorkflow, ForeachDelayFunctions { work },
        json!({"items": [{"name": null, "secs": 1}, {"name": "b", "secs": 2}]});
    foreach_terminate: "workflows/concurrency/foreach-terminate.sw.yaml", ForeachTerminateWorkflow, ForeachTerminateFunctions { work },
        json!({"items": [{"name": "a", "secs": 2}, {"name": "b", "secs": 1, "stop": true}]});
    terminate_late: "workflows/concurrency/terminate-late.sw.yaml", TerminateLateWorkflow, TerminateLateFunctions { work };
    delay: "workflows/runtime/delay.sw.yaml", DelayWorkflow, DelayFunctions {  };
    ends: "workflows/runtime/ends.sw.yaml", EndsWorkflow, EndsFunctions {  };
    timeouts: "workflows/runtime/timeouts.sw.yaml", TimeoutsWorkflow, TimeoutsFunctions { fetch, backup };
    merge_then_output: "workflows/runtime/merge-then-output.sw.yaml", MergeThenOutputWorkflow, MergeThenOutputFunctions { give };
    merge_then_output_compensated: "workflows/runtime/merge-then-output-compensated.sw.yaml", MergeThenOutputCompensatedWorkflow, MergeThenOutputCompensatedFunctions { note, give };
    on_error_guarded: "workflows/runtime/on-error-guarded.sw.yaml", OnErrorGuardedWorkflow, OnErrorGuardedFunctions { work };
    action_retries: "workflows/earlier/action_retries.sw.yaml", ActionRetriesWorkflow, ActionRetriesFunctions { first, second };
    inline_choices: "workflows/earlier/inline_choices.sw.yaml", InlineChoicesWorkflow, InlineChoicesFunctions {  };
    v01_loop: "workflows/v01/loop.sw.yaml", SendOrderConfirmationWorkflow, SendOrderConfirmationFunctions { send_confirmation_email_function },
        json!({"orders": [{"id": 1, "email": "a@b"}, {"id": 2}]});
    inject_person: "workflows/conformance/inject_person.sw.yaml", InjectPersonWorkflow, InjectPersonFunctions {  };
    inject_people_testing: "workflows/conformance/inject_people_testing.sw.yaml", InjectPeopleTestingWorkflow, InjectPeopleTestingFunctions {  };
    vegetables_second: "workflows/conformance/vegetables_second_way.sw.yaml", VegetablesSecondWayWorkflow, VegetablesSecondWayFunctions {  };
    retry_multiplier: "workflows/conformance/retry_multiplier.sw.yaml", RetryMultiplierWorkflow, RetryMultiplierFunctions { unreliable_function };
    retrying: "workflows/conformance/retrying.sw.yaml", RetryingWorkflow, RetryingFunctions { unreliable_function };
    restricted_transition: "workflows/conformance/restricted_transition.sw.yaml", RestrictedTransitionWorkflow, RestrictedTransitionFunctions { do_low_rist_operation_function, do_high_rist_operation_function };
    conformance_on_error: "workflows/conformance/on_error.sw.yaml", OnErrorWorkflow, OnErrorFunctions { unreliable_function };
    retry_on_error: "workflows/conformance/retry_on_error.sw.yaml", RetryOnErrorWorkflow, RetryOnErrorFunctions { unreliable_function };
    greeting: "workflows/conformance/greeting.sw.yaml", GreetingWorkflow, GreetingFunctions { greeting_function };
    order: "workflows/order.sw.yaml", OrderWorkflow, OrderFunctions { check_inventory, charge_card, ship_order };
    retry_on_error_json: "workflows/conformance/retry_on_error_json.sw.yaml", RetryOnErrorJsonWorkflow, RetryOnErrorJsonFunctions { unreliable_function };
    detached: "workflows/earlier/detached_branch.sw.yaml", DetachedWorkflow, DetachedFunctions { record };
    hostile_ends: "workflows/hostile/ends.sw.yaml", EndsWorkflow, EndsFunctions {};
    symbols: "workflows/hostile/symbols-a.sw.yaml", UnnamedWorkflow, UnnamedFunctions {};
    unnamed: "workflows/hostile/unnamed.sw.yaml", UnnamedWorkflow, UnnamedFunctions {};
    v01_on_error_state: "workflows/v01/on_error_state.sw.yaml", OnErrorStateWorkflow, OnErrorStateFunctions { throw_runtime_error_function };
    v01_on_error_state_fixed: "workflows/v01/on_error_state_fixed.sw.yaml", OnErrorStateFixedWorkflow, OnErrorStateFixedFunctions { throw_runtime_error_function };
    v01_on_error_workflow: "workflows/v01/on_error_workflow.sw.yaml", OnErrorWorkflowWorkflow, OnErrorWorkflowFunctions { throw_runtime_error_function };
    v01_on_error_workflow_fixed: "workflows/v01/on_error_workflow_fixed.sw.yaml", OnErrorWorkflowFixedWorkflow, OnErrorWorkflowFixedFunctions { throw_runtime_error_function };
    v01_parallel: "workflows/v01/parallel.sw.yaml", V01ParallelWorkflow, V01ParallelFunctions {};
    v01_precedence: "workflows/v01/precedence.sw.yaml", V01PrecedenceWorkflow, V01PrecedenceFunctions { work };
    relay_people: "workflows/v01/relay_people.sw.yaml", RelayPeopleWorkflow, RelayPeopleFunctions {},
        json!({"people": [{"name": "ada", "age": 36}, {"name": "bob", "age": 41}]});
    relay_people_testing: "workflows/v01/relay_people_testing.sw.yaml", RelayPeopleTestingWorkflow, RelayPeopleTestingFunctions {},
        json!({"people": [{"name": "ada", "age": 36}, {"name": "bob", "age": 41}]});
    relay_person: "workflows/v01/relay_person.sw.yaml", RelayPersonWorkflow, RelayPersonFunctions {},
        json!({"person": {"name": "ada", "age": 36}});
    v01_retries: "workflows/v01/retries.sw.yaml", V01RetriesWorkflow, V01RetriesFunctions { flaky };
    v01_restricted: "workflows/v01/restricted_transition.sw.yaml", RestrictedTransitionV01Workflow, RestrictedTransitionV01Functions { do_low_rist_operation_function, do_high_rist_operation_function };
    schema_orders: "workflows/schemas/orders.sw.yaml", SchemaOrdersWorkflow, SchemaOrdersFunctions { price },
        json!({"order": {"total": 4}});
    schema_plain_output: "workflows/schemas/plain_output.sw.yaml", SchemaPlainOutputWorkflow, SchemaPlainOutputFunctions { decide },
        json!({"wanted": "approved"});
    durable: "workflows/runtime/durable.sw.yaml", DurableWorkflow, DurableFunctions { fetch, approve };
    gtasks0: "workflows/generated/gtasks0.sw.yaml", Gtasks0Workflow, Gtasks0Functions { work }, json!({"n": 1});
    gtasks1: "workflows/generated/gtasks1.sw.yaml", Gtasks1Workflow, Gtasks1Functions { work }, json!({"n": 1});
    gtasks2: "workflows/generated/gtasks2.sw.yaml", Gtasks2Workflow, Gtasks2Functions { work }, json!({"n": 1});
    gtasks3: "workflows/generated/gtasks3.sw.yaml", Gtasks3Workflow, Gtasks3Functions { work }, json!({"n": 1});
    gtasks4: "workflows/generated/gtasks4.sw.yaml", Gtasks4Workflow, Gtasks4Functions { work }, json!({"n": 1});
    gstates0: "workflows/generated/gstates0.sw.yaml", Gstates0Workflow, Gstates0Functions { work }, json!({"n": 1});
    gstates1: "workflows/generated/gstates1.sw.yaml", Gstates1Workflow, Gstates1Functions { work }, json!({"n": 1});
    gstates2: "workflows/generated/gstates2.sw.yaml", Gstates2Workflow, Gstates2Functions { work }, json!({"n": 1});
    gstates3: "workflows/generated/gstates3.sw.yaml", Gstates3Workflow, Gstates3Functions { work }, json!({"n": 1});
    gstates4: "workflows/generated/gstates4.sw.yaml", Gstates4Workflow, Gstates4Functions { work }, json!({"n": 1});
    gv010: "workflows/generated/gv010.sw.yaml", Gv010Workflow, Gv010Functions { work }, json!({"n": 1});
    gv011: "workflows/generated/gv011.sw.yaml", Gv011Workflow, Gv011Functions { work }, json!({"n": 1});
    gv012: "workflows/generated/gv012.sw.yaml", Gv012Workflow, Gv012Functions { work }, json!({"n": 1});
    gv013: "workflows/generated/gv013.sw.yaml", Gv013Workflow, Gv013Functions { work }, json!({"n": 1});
    gv014: "workflows/generated/gv014.sw.yaml", Gv014Workflow, Gv014Functions { work }, json!({"n": 1});
    gfirst0: "workflows/generated/gfirst0.sw.yaml", Gfirst0Workflow, Gfirst0Functions { work }, json!({"n": 1});
    gfirst1: "workflows/generated/gfirst1.sw.yaml", Gfirst1Workflow, Gfirst1Functions { work }, json!({"n": 1});
    gfirst2: "workflows/generated/gfirst2.sw.yaml", Gfirst2Workflow, Gfirst2Functions { work }, json!({"n": 1});
    gfirst3: "workflows/generated/gfirst3.sw.yaml", Gfirst3Workflow, Gfirst3Functions { work }, json!({"n": 1});
    gfirst4: "workflows/generated/gfirst4.sw.yaml", Gfirst4Workflow, Gfirst4Functions { work }, json!({"n": 1});
    gsecond0: "workflows/generated/gsecond0.sw.yaml", Gsecond0Workflow, Gsecond0Functions { work }, json!({"n": 1});
    gsecond1: "workflows/generated/gsecond1.sw.yaml", Gsecond1Workflow, Gsecond1Functions { work }, json!({"n": 1});
    gsecond2: "workflows/generated/gsecond2.sw.yaml", Gsecond2Workflow, Gsecond2Functions { work }, json!({"n": 1});
    gsecond3: "workflows/generated/gsecond3.sw.yaml", Gsecond3Workflow, Gsecond3Functions { work }, json!({"n": 1});
    gsecond4: "workflows/generated/gsecond4.sw.yaml", Gsecond4Workflow, Gsecond4Functions { work }, json!({"n": 1});
}

mod switch_ops {
    swf_runtime::workflow!("workflows/runtime/switch-ops.sw.yaml");
}

impl switch_ops::SwitchOpsFunctions for Fuzzed {
    fn custom_condition(&self, _condition: CustomCondition<'_>) -> bool {
        self.decide()
    }
}

#[test]
fn random_data_never_panics_the_runtime() {
    let mut outcomes = every_workflow();
    outcomes.extend(every_workflow_with_an_io());
    let text = include_str!("../workflows/runtime/switch-ops.sw.yaml");
    let functions = Fuzzed::new(words_of(text));
    let input = json!({"n": 3, "s": "abc", "list": [1, 2]});
    let (failures, tally) =
        hostile!(@run plain, "switch_ops", &input, functions, switch_ops::SwitchOpsWorkflow);
    outcomes.push(("switch_ops", failures, tally));
    report(&outcomes);
}

/// A random CloudEvent: mostly of one of `definitions` (sometimes of none), with random data,
/// the correlation attribute its definition names set to one of two values (sometimes left
/// out), and now and then an extension of a random name. `odd`: its id, source and correlation
/// value are now and then odd texts (see [`odd_text`]).
fn random_event(
    random: &mut Random,
    words: &[String],
    definitions: &[swf_runtime::EventSpec],
    number: usize,
    odd: bool,
) -> swf_runtime::CloudEvent {
    use swf_runtime::{EventBuilder, EventBuilderV10};
    let text = |random: &mut Random, plain: &str| {
        if odd {
            odd_text(random, plain)
        } else {
            plain.to_owned()
        }
    };
    let (source, kind, correlation) = match definitions.get(random.below(definitions.len() + 1)) {
        Some(spec) => (spec.source, spec.event_type, spec.correlation),
        None => ("nowhere", "nothing", None),
    };
    let mut builder = EventBuilderV10::new()
        .id(text(random, &format!("event-{number}")))
        .source(text(random, source))
        .ty(kind)
        .data("application/json", value(random, words, 3));
    if let Some(attribute) = correlation.filter(|_| !random.chance(6)) {
        let value = *random.pick(&["k1", "k2"]);
        builder = builder.extension(attribute, text(random, value));
    }
    if random.chance(5) {
        builder = builder.extension(&random.pick(words).to_lowercase(), "x");
    }
    builder
        .build()
        .expect("an event with an id, a source and a type")
}

/// `plain`, or now and then with U+0000 (which no store holds alike), with control and
/// bidirectional characters, or long: letters that do not compress, on either side of what
/// the stores index (`MAX_STORED_KEY_BYTES`).
fn odd_text(random: &mut Random, plain: &str) -> String {
    match random.below(12) {
        0 => format!("{plain}\u{0}"),
        1 => format!("\u{202e}{plain}\té\u{1F600}\n"),
        2 => {
            let length = 900 + random.below(2_000);
            (0..length)
                .map(|_| char::from(b'a' + u8::try_from(random.below(26)).expect("a letter")))
                .collect()
        }
        _ => plain.to_owned(),
    }
}

/// The inputs of one to three instances for a host run: `seed_input` with up to two values
/// replaced in each.
fn host_inputs(seed_input: &Value, random: &mut Random, words: &[String]) -> Vec<Value> {
    (0..1 + random.below(3))
        .map(|_| {
            let mut input = seed_input.clone();
            for _ in 0..random.below(3) {
                replace_one(&mut input, random, words);
            }
            input
        })
        .collect()
}

/// Runs the cases of one workflow with events on a `Host`: a few instances started from
/// inputs made from `seed_input` (or by the events, for a workflow that starts on them), then
/// random events, then the events channel closed. Every instance must end once (the ones
/// still waiting with a `HostError` once nothing can reach them), none by a panic, and the
/// host must return.
fn exercise_with_events<M: swf_runtime::Machine>(
    subject: Subject,
    seed_input: &Value,
    functions: &Fuzzed,
    make: impl Fn() -> M,
) -> (Vec<Failure>, Tally) {
    let Subject { name: workflow, id } = subject;
    let runtime = paused_runtime();
    let mut failures = Vec::new();
    let mut tally = Tally::default();
    // A host run is a few instances and a dozen events: a fifth as many cases.
    for case in 0..cases().div_ceil(5) {
        let seed = seed_of(workflow, case);
        functions.reseed(seed ^ 0x5A5A);
        let mut random = Random::new(seed);
        let words = &functions.words;
        let machine = make();
        let definitions = machine.events();
        let events: Vec<swf_runtime::CloudEvent> = (0..4 + random.below(12))
            .map(|number| random_event(&mut random, words, definitions, number, false))
            .collect();
        let inputs = host_inputs(seed_input, &mut random, words);
        let fail = |what: String| Failure {
            workflow,
            case,
            what,
        };
        let ran = std::panic::catch_unwind(AssertUnwindSafe(|| {
            runtime.block_on(bounded(async {
                let (host, channels) = swf_runtime::Host::new(machine, Default::default());
                let offered = inputs.len();
                // A workflow that starts on events refuses these: its events start its
                // instances.
                let started: Vec<swf_runtime::InstanceId> = inputs
                    .into_iter()
                    .filter_map(|input| host.start_instance(input).ok())
                    .collect();
                tally.refused += offered - started.len();
                let swf_runtime::HostChannels {
                    events: sender,
                    mut produced,
                    mut unmatched,
                    mut outcomes,
                } = channels;
                let router = tokio::spawn(host.run());
                let feeder = tokio::spawn(async move {
                    for event in events {
                        if sender.send(event).await.is_err() {
                            return;
                        }
                    }
                });
                let mut ended = Vec::new();
                let (mut produced_open, mut unmatched_open) = (true, true);
                loop {
                    tokio::select! {
                        event = produced.recv(), if produced_open => produced_open = event.is_some(),
                        item = unmatched.recv(), if unmatched_open => unmatched_open = item.is_some(),
                        outcome = outcomes.recv() => match outcome {
                            Some(outcome) => ended.push(outcome),
                            None => break,
                        },
                    }
                }
                feeder.await.map_err(|error| format!("the feeder failed: {error}"))?;
                router.await.map_err(|error| format!("the host failed: {error}"))?;
                Ok::<_, String>((started, ended))
            }))
        }));
        let (started, ended) = match ran {
            Ok(Ok(Ok(outcomes))) => outcomes,
            Ok(Ok(Err(what)) | Err(what)) => {
                failures.push(fail(what));
                continue;
            }
            Err(panic) => {
                failures.push(fail(format!("panicked: {}", panic_text(panic.as_ref()))));
                continue;
            }
        };
        let mut ids: Vec<swf_runtime::InstanceId> =
            ended.iter().map(|outcome| outcome.instance).collect();
        ids.sort_unstable();
        if ids.windows(2).any(|pair| pair[0] == pair[1]) {
            failures.push(fail(format!("an instance ended twice: {ids:?}")));
        }
        if let Some(missing) = started.iter().find(|id| !ids.contains(id)) {
            failures.push(fail(format!("instance {missing} never ended")));
        }
        for outcome in ended {
            match outcome.result {
                Ok(_) => tally.completed += 1,
                Err(error) if error.error().message.contains("panicked") => {
                    failures.push(fail(format!("an instance panicked: {error}")));
                }
                Err(error) => {
                    tally.failed += 1;
                    if let Err(what) = check_error(&error, id) {
                        failures.push(fail(what));
                    }
                }
            }
        }
    }
    (failures, tally)
}

hostile! {
    with_io every_workflow_with_an_io;
    halt: "workflows/compensation/halt.sw.yaml", HaltWorkflow, HaltFunctions {};
    branch_schedule: "workflows/concurrency/branch-schedule.sw.yaml", BranchScheduleWorkflow, BranchScheduleFunctions { work };
    scheduled_duration: "workflows/concurrency/scheduled-duration.sw.yaml", ScheduledDurationWorkflow, ScheduledDurationFunctions { work };
    scheduled_duration_end: "workflows/concurrency/scheduled-duration-end.sw.yaml", ScheduledDurationEndWorkflow, ScheduledDurationEndFunctions { work };
    scheduled_start_duration: "workflows/concurrency/scheduled-start-duration.sw.yaml", ScheduledStartDurationWorkflow, ScheduledStartDurationFunctions { work };
    scheduled_start_end: "workflows/concurrency/scheduled-start-end.sw.yaml", ScheduledStartEndWorkflow, ScheduledStartEndFunctions { work };
}

hostile! {
    events every_workflow_with_events;
    approval: "workflows/events/approval.sw.yaml", ApprovalWorkflow, ApprovalFunctions { ask_manager },
        json!({"amount": 120, "requester": "ada"});
    ev_collect: "workflows/events/ev-collect.sw.yaml", EvCollectWorkflow, EvCollectFunctions { note };
    ev_either: "workflows/events/ev-either.sw.yaml", EvEitherWorkflow, EvEitherFunctions { reply };
    ev_three_readings: "workflows/events/ev-three-readings.sw.yaml", EvThreeReadingsWorkflow, EvThreeReadingsFunctions {};
    ev_track: "workflows/events/ev-track.sw.yaml", EvTrackWorkflow, EvTrackFunctions {};
    ev_greeting: "workflows/events/greeting.sw.yaml", GreetingWorkflow, GreetingFunctions { greeting_function };
    ev_orders: "workflows/events/orders.sw.yaml", ConfirmOrdersWorkflow, ConfirmOrdersFunctions { send_confirmation_function };
    ev_parallel: "workflows/events/parallel.sw.yaml", FanOutWorkflow, FanOutFunctions { quote };
    ev_patient: "workflows/events/patient.sw.yaml", PatientVitalsWorkflow, PatientVitalsFunctions { record_vitals };
    ev_terminate: "workflows/events/terminate.sw.yaml", TerminateRaceWorkflow, TerminateRaceFunctions { slow };
    ev_together: "workflows/events/together.sw.yaml", TogetherWorkflow, TogetherFunctions {};
    v01_events: "workflows/v01/events.sw.yaml", V01EventsWorkflow, V01EventsFunctions { ship };
    event_retry: "workflows/earlier/event_retry.sw.yaml", EventRetryWorkflow, EventRetryFunctions { flaky };
    leftover: "workflows/earlier/leftover_events.sw.yaml", LeftoverWorkflow, LeftoverFunctions {};
    combos: "workflows/compensation/combos.sw.yaml", CombosWorkflow, CombosFunctions { flaky };
    waiting_branches: "workflows/concurrency/waiting-branches.sw.yaml", WaitingBranchesWorkflow, WaitingBranchesFunctions {};
    printer: "workflows/hostile/3d-printer.sw.yaml", Workflow3dPrinterWorkflow, Workflow3dPrinterFunctions { type_, f_3rd, say_hi };
    durable_order: "workflows/durable/order.sw.yaml", DurableOrderWorkflow, DurableOrderFunctions { charge, invoice, notify, pick };
    quick_order: "workflows/durable/quick-order.sw.yaml", QuickOrderWorkflow, QuickOrderFunctions { charge, invoice, notify, pick };
}

mod ev_inline {
    swf_runtime::workflow!("workflows/events/ev-inline.sw.yaml");
}

impl ev_inline::EvInlineFunctions for Fuzzed {
    async fn answer(&self, _args: Value) -> Result<Value, FunctionError> {
        self.answer()
    }

    fn custom_condition(&self, _condition: CustomCondition<'_>) -> bool {
        self.decide()
    }
}

#[test]
fn random_events_never_panic_or_strand_a_host() {
    let mut outcomes = every_workflow_with_events();
    let text = include_str!("../workflows/events/ev-inline.sw.yaml");
    let functions = Fuzzed::new(words_of(text));
    let (failures, tally) =
        hostile!(@run events, "ev_inline", &json!({}), functions, ev_inline::EvInlineWorkflow);
    outcomes.push(("ev_inline", failures, tally));
    report(&outcomes);
}

/// Runs the cases of one workflow with events on a durable host, over a fresh SQLite store and
/// (when its server is up, always in CI) a fresh PostgreSQL schema: instances started from
/// inputs made from `seed_input`, random events with odd ids, sources and correlation values
/// delivered between jumps of the host's clock, the worker running all along, then the clock
/// past every deadline. An event is refused only when it holds text no store holds (U+0000),
/// and then as `Invalid`; nothing else fails in a store; no step panics; an instance that fails
/// says what and whose.
fn exercise_durable<M>(
    subject: Subject,
    seed_input: &Value,
    functions: &Fuzzed,
    make: impl Fn() -> M,
) -> (Vec<Failure>, Tally)
where
    M: swf_runtime::Machine,
{
    let Subject { name: workflow, id } = subject;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let mut failures = Vec::new();
    let mut tally = Tally::default();
    // A case is two stores, a worker and a few hundred milliseconds: a thirtieth as many.
    for case in 0..cases().div_ceil(30) {
        let seed = seed_of(workflow, case);
        functions.reseed(seed ^ 0x3C3C);
        let mut random = Random::new(seed);
        let words = &functions.words;
        let definitions = make().events();
        let events: Vec<(swf_runtime::CloudEvent, u64)> = (0..4 + random.below(12))
            .map(|number| {
                let event = random_event(&mut random, words, definitions, number, true);
                (event, random.next() % (48 * 3600))
            })
            .collect();
        let inputs = host_inputs(seed_input, &mut random, words);
        let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
            runtime.block_on(async {
                let (sqlite, _dir) = swf_tests::stores::sqlite().await;
                durable_case(make(), sqlite, &inputs, &events, id, &mut tally).await?;
                if let Some((postgres, _schema)) = swf_tests::stores::postgres().await {
                    durable_case(make(), postgres, &inputs, &events, id, &mut tally).await?;
                }
                Ok::<_, String>(())
            })
        }));
        let what = match run {
            Ok(Ok(())) => continue,
            Ok(Err(what)) => what,
            Err(panic) => format!("panicked: {}", panic_text(panic.as_ref())),
        };
        failures.push(Failure {
            workflow,
            case,
            what,
        });
    }
    (failures, tally)
}

/// One case of [`exercise_durable`] on `store`.
async fn durable_case<M: swf_runtime::Machine, S: swf_runtime::store::Store>(
    machine: M,
    store: S,
    inputs: &[Value],
    events: &[(swf_runtime::CloudEvent, u64)],
    id: &str,
    tally: &mut Tally,
) -> Result<(), String> {
    use std::time::Duration;
    use swf_runtime::store::StoreErrorKind;
    use swf_runtime::{AttributesReader, DurableConfig, DurableHost, Ended, Report, StartError};

    let definitions = machine.events();
    let clock = Arc::new(swf_runtime::ManualClock::new(time(CLOCKS[3])));
    let config = DurableConfig::default()
        .worker("hostile")
        .clock(clock.clone())
        .poll(Duration::from_millis(5));
    let host = DurableHost::open(machine, store, config)
        .await
        .map_err(|error| format!("the host did not open: {error}"))?;
    let mut reports = host.reports();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let (sink, mut produced) = tokio::sync::mpsc::channel(16);
    let drain = tokio::spawn(async move { while produced.recv().await.is_some() {} });
    let worker = tokio::spawn({
        let host = host.clone();
        async move {
            host.run(sink, async {
                let _ = stopped.await;
            })
            .await;
        }
    });
    for input in inputs {
        match host.start(input.clone()).await {
            Ok(_) => {}
            Err(StartError::Refused(error)) => {
                tally.refused += 1;
                check_error(&error, id)?;
            }
            Err(error @ (StartError::Store(_) | StartError::KeyTaken { .. })) => {
                return Err(format!("a start failed: {error}"));
            }
        }
    }
    for (event, seconds) in events {
        let unstorable = holds_unstorable_text(event, definitions);
        match host.deliver(event.clone()).await {
            Ok(_) if !unstorable => {}
            Err(error) if unstorable && error.kind == StoreErrorKind::Invalid => tally.refused += 1,
            other => {
                let (id, source) = (event.id(), event.source());
                let source: String = source.chars().take(60).collect();
                return Err(format!("delivering {id:?} from {source:?} gave {other:?}"));
            }
        }
        clock.advance(Duration::from_secs(*seconds));
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // Past every deadline of these workflows (hours, days): what waits for a time goes on.
    clock.advance(Duration::from_secs(400 * 24 * 3600));
    tokio::time::sleep(Duration::from_millis(60)).await;
    let _ = stop.send(());
    worker
        .await
        .map_err(|error| format!("the worker failed: {error}"))?;
    drain
        .await
        .map_err(|error| format!("the sink failed: {error}"))?;
    loop {
        match reports.try_recv() {
            Ok(Report::StoreFailed { during, error }) => {
                return Err(format!("the store failed while {during}: {error}"));
            }
            Ok(Report::StepPanicked { instance, message }) => {
                return Err(format!("a step of instance {instance} panicked: {message}"));
            }
            Ok(Report::Ended { ended, .. }) => match ended {
                Ended::Completed(_) => tally.completed += 1,
                Ended::Failed(error) => {
                    tally.failed += 1;
                    check_error(&error, id)?;
                }
                Ended::Cancelled(why) => return Err(format!("cancelled by nobody: {why}")),
            },
            Ok(_) | Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_)) => {}
            Err(_) => return Ok(()),
        }
    }
}

/// Whether `event` holds text the stores cannot index where they do (its id, its source, the
/// value of the correlation attribute of a definition it matches): U+0000, or more than
/// `MAX_STORED_KEY_BYTES`.
fn holds_unstorable_text(
    event: &swf_runtime::CloudEvent,
    definitions: &[swf_runtime::EventSpec],
) -> bool {
    use swf_runtime::AttributesReader;
    let unstorable =
        |text: &str| text.contains('\0') || text.len() > swf_runtime::MAX_STORED_KEY_BYTES;
    let correlation = |attribute: &str| {
        event
            .extension(attribute)
            .is_some_and(|value| unstorable(&value.to_string()))
    };
    unstorable(event.id())
        || unstorable(event.source())
        || definitions.iter().any(|spec| {
            spec.source == event.source().as_str()
                && spec.event_type == event.ty()
                && spec.correlation.is_some_and(correlation)
        })
}

#[test]
fn random_events_never_fail_a_durable_host_on_either_store() {
    let mut outcomes = Vec::new();
    macro_rules! durable {
        ($($module:ident: $file:literal, $workflow:ident, $input:expr;)*) => {$(
            let text = include_str!(concat!("../", $file));
            let functions = Fuzzed::new(words_of(text));
            let subject = Subject { name: stringify!($module), id: $module::$workflow::<Fuzzed>::ID };
            let (failures, tally) = exercise_durable(subject, &$input, &functions, || {
                $module::$workflow::new(functions.clone())
            });
            outcomes.push((stringify!($module), failures, tally));
        )*};
    }
    durable! {
        durable_order: "workflows/durable/order.sw.yaml", DurableOrderWorkflow,
            json!({"orderId": 7, "amount": 70, "items": ["a", "b"]});
        approval: "workflows/events/approval.sw.yaml", ApprovalWorkflow,
            json!({"amount": 120, "requester": "ada"});
        ev_either: "workflows/events/ev-either.sw.yaml", EvEitherWorkflow, json!({});
        ev_collect: "workflows/events/ev-collect.sw.yaml", EvCollectWorkflow, json!({});
        ev_inline: "workflows/events/ev-inline.sw.yaml", EvInlineWorkflow, json!({});
    }
    report(&outcomes);
}
