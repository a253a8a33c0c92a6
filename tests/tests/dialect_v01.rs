//! v0.1 (`001`): the draft's own examples, compiled by `workflow!` and run to the data the draft
//! shows, then the constructs its examples do not show (choices of every kind, parallel
//! branches, loops with every field, filters, retries on actions).
//!
//! Each file in `workflows/v01/` says in a comment what was added to the draft's text to make a
//! complete workflow. Timed tests run on tokio's paused clock.

use std::time::Duration;

use swf_runtime::{FunctionError, Value, json};
use tokio::time::Instant;

const MINUTE: Duration = Duration::from_secs(60);

use swf_tests::scripted::Calls;

/// For workflows that call no function.
#[derive(Clone)]
struct NoFunctions;

/// An error whose name ends in `Exception`, as the draft's onError examples expect.
fn runtime_exception() -> FunctionError {
    FunctionError::named("RuntimeException", "the function threw")
}

// ---------------------------------------------------------------------------------------------
// "Relay State"
// ---------------------------------------------------------------------------------------------

mod relay_person {
    use super::*;

    swf_runtime::workflow!("workflows/v01/relay_person.sw.yaml");

    impl RelayPersonFunctions for NoFunctions {}

    fn person() -> Value {
        json!({
            "fnam": "John",
            "lname": "Doe",
            "address": "1234 SomeStreet",
            "age": 40
        })
    }

    /// "The data output of the "SimpleRelayState" which then is passed as input to the
    /// transition state would be:" the person, exactly.
    #[tokio::test]
    async fn the_person_is_passed_to_the_transition_state() {
        let workflow = RelayPersonWorkflow::new(NoFunctions);
        let state = workflow.start(json!({})).unwrap();
        assert_eq!(state.task_name(), Some("SimpleRelayState"));
        let state = workflow.step(state).await.unwrap();
        assert_eq!(
            state,
            RelayPersonState::GreetPersonState {
                data: json!({"person": person()})
            }
        );
        let output = workflow.run(json!({})).await.unwrap();
        assert_eq!(output, json!({"person": person()}));
    }

    /// "If the relay state already receives a data input from the previous transition state,
    /// the inject data will be merged with its data input."
    #[tokio::test]
    async fn inject_data_merges_with_the_data_input() {
        let output = RelayPersonWorkflow::new(NoFunctions)
            .run(json!({"greeting": "Hello", "person": {"email": "john@example.com"}}))
            .await
            .unwrap();
        let mut expected = person();
        expected["email"] = json!("john@example.com");
        assert_eq!(output, json!({"greeting": "Hello", "person": expected}));
    }
}

fn marry_and_kelly() -> Value {
    json!([
        {"fnam": "Marry", "lname": "Allice", "address": "1234 SomeStreet", "age": 25},
        {"fnam": "Kelly", "lname": "Mill", "address": "1234 SomeStreet", "age": 30}
    ])
}

mod relay_people {
    use super::*;

    swf_runtime::workflow!("workflows/v01/relay_people.sw.yaml");

    impl RelayPeopleFunctions for NoFunctions {}

    /// "In which case the states data output would include people whos age is less than 40":
    /// Marry and Kelly, in document order, passed to the transition state.
    #[tokio::test]
    async fn the_people_younger_than_40_are_the_output() {
        let workflow = RelayPeopleWorkflow::new(NoFunctions);
        let state = workflow.start(json!({})).unwrap();
        let state = workflow.step(state).await.unwrap();
        assert_eq!(
            state,
            RelayPeopleState::GreetPersonState {
                data: marry_and_kelly()
            }
        );
        assert_eq!(workflow.run(json!({})).await.unwrap(), marry_and_kelly());
    }
}

mod relay_people_testing {
    use super::*;

    swf_runtime::workflow!("workflows/v01/relay_people_testing.sw.yaml");

    impl RelayPeopleTestingFunctions for NoFunctions {}

    /// "change your output path to for example: `$.people[?(@.age >= 40)]` to test if your
    /// workflow behaves properly for the case when there are people who's age is greater or
    /// equal 40": only John.
    #[tokio::test]
    async fn the_people_aged_40_or_more_are_the_output() {
        let output = RelayPeopleTestingWorkflow::new(NoFunctions)
            .run(json!({}))
            .await
            .unwrap();
        assert_eq!(
            output,
            json!([{"fnam": "John", "lname": "Doe", "address": "1234 SomeStreet", "age": 40}])
        );
    }
}

// ---------------------------------------------------------------------------------------------
// "Loop Definition"
// ---------------------------------------------------------------------------------------------

mod send_order_confirmation {
    use super::*;

    swf_runtime::workflow!("workflows/v01/loop.sw.yaml");

    impl SendOrderConfirmationFunctions for Calls {
        async fn send_confirmation_email_function(
            &self,
            args: Value,
        ) -> Result<Value, FunctionError> {
            self.call(args)
        }
    }

    /// "The data input to the "sendConfirmationEmail" state could be for example:"
    fn orders() -> Value {
        json!({
            "orders": [
                {"orderNumber": "1234", "completed": true, "email": "firstBuyer@buyer.com"},
                {"orderNumber": "5678", "completed": true, "email": "secondBuyer@buyer.com"},
                {"orderNumber": "9910", "completed": false, "email": "thirdBuyer@buyer.com"}
            ]
        })
    }

    /// "in which case this state will loop two times for each of the completed orders": the
    /// function is called once per completed order, with that order as its input.
    #[tokio::test]
    async fn the_email_is_sent_once_per_completed_order() {
        let workflow =
            SendOrderConfirmationWorkflow::new(Calls::new(|_, _| Ok(json!({"sent": true}))));
        let output = workflow.run(orders()).await.unwrap();
        let orders = orders();
        assert_eq!(
            workflow.functions().args(),
            [orders["orders"][0].clone(), orders["orders"][1].clone()]
        );
        // Without an outputCollection, the state's data is unchanged by the loop.
        assert_eq!(output, orders);
    }

    #[tokio::test]
    async fn no_completed_order_sends_nothing() {
        let workflow = SendOrderConfirmationWorkflow::new(Calls::new(|_, _| Ok(json!({}))));
        let input = json!({"orders": [{"orderNumber": "9910", "completed": false}]});
        assert_eq!(workflow.run(input.clone()).await.unwrap(), input);
        assert!(workflow.functions().args().is_empty());
    }
}

// ---------------------------------------------------------------------------------------------
// "Restricting Transitions based on state output"
// ---------------------------------------------------------------------------------------------

mod restricted_transition {
    use super::*;

    swf_runtime::workflow!("workflows/v01/restricted_transition.sw.yaml");

    struct Operations {
        low: Calls,
        high: Calls,
    }

    impl Operations {
        fn new(low_result: Value) -> Self {
            Self {
                low: Calls::new(move |_, _| Ok(low_result.clone())),
                high: Calls::new(|_, _| Ok(json!({"highRiskDone": true}))),
            }
        }
    }

    impl RestrictedTransitionV01Functions for Operations {
        async fn do_low_rist_operation_function(
            &self,
            args: Value,
        ) -> Result<Value, FunctionError> {
            self.low.call(args)
        }

        async fn do_high_rist_operation_function(
            &self,
            args: Value,
        ) -> Result<Value, FunctionError> {
            self.high.call(args)
        }
    }

    /// "only allows transition to the "highRiskState" if the output of the state to transition
    /// from includes an user with the title "MANAGER"."
    #[tokio::test]
    async fn a_manager_reaches_high_risk_state() {
        let workflow = RestrictedTransitionV01Workflow::new(Operations::new(
            json!({"approval": {"user": {"name": "Jane", "title": "MANAGER"}}}),
        ));
        let state = workflow.start(json!({"request": "wire"})).unwrap();
        assert_eq!(state.task_name(), Some("lowRiskState"));
        let state = workflow.step(state).await.unwrap();
        assert_eq!(state.task_name(), Some("highRiskState"));
        let state = workflow.step(state).await.unwrap();
        assert_eq!(
            state.output(),
            Some(&json!({
                "request": "wire",
                "approval": {"user": {"name": "Jane", "title": "MANAGER"}},
                "highRiskDone": true
            }))
        );
    }

    /// "The default should be that if this happens workflow execution should halt and a
    /// detailed message on why the transition failed should be provided."
    #[tokio::test]
    async fn a_clerk_halts_the_workflow() {
        let workflow = RestrictedTransitionV01Workflow::new(Operations::new(
            json!({"user": {"title": "CLERK"}}),
        ));
        let error = workflow.run(json!({})).await.unwrap_err();
        assert_eq!(error.task(), "lowRiskState");
        assert_eq!(error.error().name, "TransitionConditionError");
        let message = &error.error().message;
        for part in [
            "lowRiskState",
            "highRiskState",
            "#jsonPath(stateOutputData,'$..user.title') eq 'MANAGER'",
        ] {
            assert!(message.contains(part), "{message:?} does not name {part:?}");
        }
        assert!(workflow.functions().high.args().is_empty());
    }
}

// ---------------------------------------------------------------------------------------------
// "Workflow Error Handling", as the draft writes it
// ---------------------------------------------------------------------------------------------

mod on_error_state_as_written {
    use super::*;

    swf_runtime::workflow!("workflows/v01/on_error_state.sw.yaml");

    impl OnErrorStateFunctions for Calls {
        async fn throw_runtime_error_function(&self, args: Value) -> Result<Value, FunctionError> {
            self.call(args)
        }
    }

    /// `$.exception.name` selects nothing in `{"error": {...}}`, so the handler never matches
    /// and the error fails the run, in the state that raised it.
    #[tokio::test]
    async fn the_handler_matches_nothing_and_the_error_fails_the_run() {
        let workflow = OnErrorStateWorkflow::new(Calls::new(|_, _| Err(runtime_exception())));
        let error = workflow.run(json!({"a": 1})).await.unwrap_err();
        assert_eq!(error.task(), "HandleErrors");
        assert_eq!(error.error().name, "RuntimeException");
        assert_eq!(error.status(), swf_runtime::ExecStatus::Fail);
    }

    #[tokio::test]
    async fn without_an_error_the_state_transitions() {
        let workflow = OnErrorStateWorkflow::new(Calls::new(|_, _| Ok(json!({"ok": true}))));
        let output = workflow.run(json!({})).await.unwrap();
        assert_eq!(output, json!({"ok": true, "reached": "doSomethingElse"}));
    }
}

mod on_error_workflow_as_written {
    use super::*;

    swf_runtime::workflow!("workflows/v01/on_error_workflow.sw.yaml");

    impl OnErrorWorkflowFunctions for Calls {
        async fn throw_runtime_error_function(&self, args: Value) -> Result<Value, FunctionError> {
            self.call(args)
        }
    }

    #[tokio::test]
    async fn the_handler_matches_nothing_in_either_state() {
        let workflow = OnErrorWorkflowWorkflow::new(Calls::new(|_, _| Err(runtime_exception())));
        let error = workflow.run(json!({})).await.unwrap_err();
        assert_eq!(error.task(), "HandleErrors1");

        let workflow = OnErrorWorkflowWorkflow::new(Calls::new(|n, _| match n {
            0 => Ok(json!({})),
            _ => Err(runtime_exception()),
        }));
        let error = workflow.run(json!({})).await.unwrap_err();
        assert_eq!(error.task(), "HandleErrors2");
        assert_eq!(error.error().name, "RuntimeException");
    }

    /// Both of the draft's states run when nothing fails: doSomethingElse leads to
    /// HandleErrors2 until its result says it ran.
    #[tokio::test]
    async fn both_states_run_without_errors() {
        let workflow = OnErrorWorkflowWorkflow::new(Calls::new(|n, _| match n {
            0 => Ok(json!({"first": true})),
            _ => Ok(json!({"secondDone": true})),
        }));
        let output = workflow.run(json!({})).await.unwrap();
        assert_eq!(
            output,
            json!({"first": true, "secondDone": true, "reached": "finished"})
        );
        assert_eq!(workflow.functions().args().len(), 2);
    }
}

// ---------------------------------------------------------------------------------------------
// Constructs the draft's examples do not show
// ---------------------------------------------------------------------------------------------

mod choices {
    use super::*;

    swf_runtime::workflow!("workflows/v01/choices.sw.yaml");

    impl V01ChoicesFunctions for NoFunctions {}

    async fn route(input: Value) -> Value {
        let output = V01ChoicesWorkflow::new(NoFunctions)
            .run(input)
            .await
            .unwrap();
        output["route"].clone()
    }

    /// The first choice that holds decides, else `default`; numbers compare as numbers.
    #[tokio::test]
    async fn each_kind_of_choice_routes() {
        assert_eq!(route(json!({"age": 9})).await, "Minor");
        assert_eq!(
            route(json!({"age": 70, "member": true})).await,
            "SeniorMember"
        );
        // Not a member: the `and` fails, the `not` (age > 30) holds.
        assert_eq!(route(json!({"age": 70})).await, "Over30");
        assert_eq!(route(json!({"age": 25, "country": "BE"})).await, "French");
        assert_eq!(route(json!({"age": 25, "country": "DE"})).await, "Other");
        assert_eq!(route(json!({"age": 30})).await, "Other");
    }
}

mod parallel {
    use super::*;

    swf_runtime::workflow!("workflows/v01/parallel.sw.yaml");

    impl V01ParallelFunctions for NoFunctions {}

    /// The waited-for branches' outputs are merged into the state's data; the branch with
    /// `waitForCompletion: false` runs on its own and is not part of the output.
    #[tokio::test]
    async fn waited_branches_merge_into_the_output() {
        let output = V01ParallelWorkflow::new(NoFunctions)
            .run(json!({"input": 1}))
            .await
            .unwrap();
        assert_eq!(
            output,
            json!({"input": 1, "left": "done", "right": "done", "rightAgain": "done"})
        );
    }
}

mod loop_collect {
    use super::*;

    swf_runtime::workflow!("workflows/v01/loop_collect.sw.yaml");

    impl V01LoopCollectFunctions for Calls {
        async fn price(&self, args: Value) -> Result<Value, FunctionError> {
            self.call(args)
        }
    }

    fn prices() -> Calls {
        Calls::new(|_, args| match args["item"].as_str() {
            Some("pen") => Ok(json!(2)),
            Some("chair") => Ok(json!(150)),
            _ => Ok(json!(40)),
        })
    }

    /// Each item is its iteration's input; the outputs are collected in order at
    /// `outputCollection`; iterations run a `timeDelay` apart; the loop stops after the first
    /// output for which `completionCondition` holds.
    #[tokio::test(start_paused = true)]
    async fn items_are_priced_until_one_costs_over_100() {
        let workflow = V01LoopCollectWorkflow::new(prices());
        let input = json!({"items": [
            {"name": "pen"}, {"name": "lamp"}, {"name": "chair"}, {"name": "desk"}
        ]});
        let output = workflow.run(input.clone()).await.unwrap();
        let mut expected = input;
        expected["priced"] = json!([
            {"name": "pen", "price": 2},
            {"name": "lamp", "price": 40},
            {"name": "chair", "price": 150}
        ]);
        assert_eq!(output, expected);
        let calls = workflow.functions();
        assert_eq!(
            calls.args(),
            [
                json!({"item": "pen"}),
                json!({"item": "lamp"}),
                json!({"item": "chair"})
            ]
        );
        assert_eq!(calls.times(), [Duration::ZERO, MINUTE, 2 * MINUTE]);
    }
}

mod filters {
    use super::*;

    swf_runtime::workflow!("workflows/v01/filters.sw.yaml");

    struct Services {
        greet: Calls,
        count: Calls,
    }

    impl V01FiltersFunctions for Services {
        async fn greet(&self, args: Value) -> Result<Value, FunctionError> {
            self.greet.call(args)
        }

        async fn count(&self, args: Value) -> Result<Value, FunctionError> {
            self.count.call(args)
        }
    }

    /// The state filter's inputPath selects the customer and its outputPath the greeting; its
    /// resultPath places the first action's result (whose own inputPath selects the profile);
    /// the second action's resultPath is its own.
    #[tokio::test]
    async fn state_and_action_filters_select_and_place_data() {
        let workflow = V01FiltersWorkflow::new(Services {
            greet: Calls::new(|_, args| {
                Ok(json!(format!(
                    "Hello {}",
                    args["name"].as_str().unwrap_or("?")
                )))
            }),
            count: Calls::new(|_, _| Ok(json!(1))),
        });
        let output = workflow
            .run(json!({
                "customer": {"name": "Ann", "profile": {"name": "Ann B."}},
                "other": true
            }))
            .await
            .unwrap();
        assert_eq!(output, json!({"text": "Hello Ann B.", "count": 1}));
        assert_eq!(
            workflow.functions().greet.args(),
            [json!({"name": "Ann B."})]
        );
        // The second action sees the customer with the greeting placed.
        assert_eq!(
            workflow.functions().count.args(),
            [json!({
                "name": "Ann",
                "profile": {"name": "Ann B."},
                "greeting": {"text": "Hello Ann B."}
            })]
        );
    }
}

mod retries {
    use super::*;

    use swf_runtime::ExecStatus;

    swf_runtime::workflow!("workflows/v01/retries.sw.yaml");

    impl V01RetriesFunctions for Calls {
        async fn flaky(&self, args: Value) -> Result<Value, FunctionError> {
            self.call(args)
        }
    }

    /// `max: 2` retries one minute apart (the interval's `R5` allows more), then the retry's
    /// transition.
    #[tokio::test(start_paused = true)]
    async fn exhausted_retries_take_the_retry_s_transition() {
        let workflow = V01RetriesWorkflow::new(Calls::new(|_, _| {
            Err(FunctionError::named("Busy", "try later"))
        }));
        let output = workflow.run(json!({})).await.unwrap();
        assert_eq!(output["reached"], "GaveUp");
        assert_eq!(
            workflow.functions().times(),
            [Duration::ZERO, MINUTE, 2 * MINUTE]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_can_succeed() {
        let workflow = V01RetriesWorkflow::new(Calls::new(|n, _| match n {
            0 => Err(FunctionError::named("Busy", "try later")),
            _ => Ok(json!({"answer": 42})),
        }));
        let output = workflow.run(json!({})).await.unwrap();
        assert_eq!(output, json!({"answer": 42, "reached": "Done"}));
    }

    /// The status of a run: `Invalid` when its input is refused, `Success` with an output.
    #[tokio::test]
    async fn refused_input_is_invalid_and_an_output_a_success() {
        let workflow = V01RetriesWorkflow::new(Calls::new(|_, _| Ok(json!({}))));
        let result = workflow.run(json!([1, 2])).await;
        assert_eq!(ExecStatus::of(&result), ExecStatus::Invalid);
        let result = workflow.run(json!({})).await;
        assert_eq!(ExecStatus::of(&result).as_str(), "Success");
    }

    /// Errors the retry does not match go straight to the state's onError.
    #[tokio::test(start_paused = true)]
    async fn other_errors_are_not_retried() {
        let workflow = V01RetriesWorkflow::new(Calls::new(|_, _| Err(runtime_exception())));
        let output = workflow.run(json!({})).await.unwrap();
        assert_eq!(output["reached"], "Failed");
        assert_eq!(workflow.functions().times(), [Duration::ZERO]);
    }
}

// ---------------------------------------------------------------------------------------------
// "Workflow Error Handling", with `$.error.name`
// ---------------------------------------------------------------------------------------------

/// What the error filter's `resultPath: $.trace` receives: the error as SEMANTICS.md exposes it.
fn trace_of_runtime_exception() -> Value {
    json!({"error": {"name": "RuntimeException", "message": "the function threw", "trace": ""}})
}

mod on_error_state_fixed {
    use super::*;

    swf_runtime::workflow!("workflows/v01/on_error_state_fixed.sw.yaml");

    impl OnErrorStateFixedFunctions for Calls {
        async fn throw_runtime_error_function(&self, args: Value) -> Result<Value, FunctionError> {
            self.call(args)
        }
    }

    /// "we want to catch all errors whose name ends in "Exception". If that happens, we want to
    /// workflow to continue execution with the "afterErrorState" state." The error is placed at
    /// `$.trace`; `$.stateerror` selects nothing, so the output is not filtered.
    #[tokio::test]
    async fn an_exception_continues_with_after_error_state() {
        let workflow = OnErrorStateFixedWorkflow::new(Calls::new(|_, _| Err(runtime_exception())));
        let state = workflow.start(json!({"a": 1})).unwrap();
        let state = workflow.step(state).await.unwrap();
        assert_eq!(
            state,
            OnErrorStateFixedState::AfterErrorState {
                data: json!({"a": 1, "trace": trace_of_runtime_exception()})
            }
        );
        let output = workflow.step(state).await.unwrap();
        assert_eq!(
            output.output(),
            Some(
                &json!({"a": 1, "trace": trace_of_runtime_exception(), "reached": "afterErrorState"})
            )
        );
    }

    /// "errors that don't match the "condition" may not be caught by this explicit error
    /// handling."
    #[tokio::test]
    async fn other_errors_are_not_caught() {
        let workflow = OnErrorStateFixedWorkflow::new(Calls::new(|_, _| {
            Err(FunctionError::named("Timeout", "too slow"))
        }));
        let error = workflow.run(json!({})).await.unwrap_err();
        assert_eq!(error.task(), "HandleErrors");
        assert_eq!(error.error().name, "Timeout");
    }
}

mod on_error_workflow_fixed {
    use super::*;

    swf_runtime::workflow!("workflows/v01/on_error_workflow_fixed.sw.yaml");

    impl OnErrorWorkflowFixedFunctions for Calls {
        async fn throw_runtime_error_function(&self, args: Value) -> Result<Value, FunctionError> {
            self.call(args)
        }
    }

    /// "will handle errors that happen in all states of the workflow, in this example both the
    /// "HandleErrors1" and "HandleErrors2" states."
    #[tokio::test]
    async fn the_workflow_handler_catches_errors_of_both_states() {
        let workflow =
            OnErrorWorkflowFixedWorkflow::new(Calls::new(|_, _| Err(runtime_exception())));
        let output = workflow.run(json!({})).await.unwrap();
        assert_eq!(
            output,
            json!({"trace": trace_of_runtime_exception(), "reached": "afterErrorState"})
        );

        let workflow = OnErrorWorkflowFixedWorkflow::new(Calls::new(|n, _| match n {
            0 => Ok(json!({"first": true})),
            _ => Err(runtime_exception()),
        }));
        let state = workflow.start(json!({})).unwrap();
        let state = workflow.step(state).await.unwrap();
        assert_eq!(state.task_name(), Some("doSomethingElse"));
        let state = workflow.step(state).await.unwrap();
        assert_eq!(state.task_name(), Some("HandleErrors2"));
        let state = workflow.step(state).await.unwrap();
        assert_eq!(
            state,
            OnErrorWorkflowFixedState::AfterErrorState {
                data: json!({"first": true, "trace": trace_of_runtime_exception()})
            }
        );
    }
}

mod precedence {
    use super::*;

    swf_runtime::workflow!("workflows/v01/precedence.sw.yaml");

    impl V01PrecedenceFunctions for Calls {
        async fn work(&self, args: Value) -> Result<Value, FunctionError> {
            self.call(args)
        }
    }

    async fn reached(error: FunctionError) -> Value {
        let workflow = V01PrecedenceWorkflow::new(Calls::new(move |_, _| Err(error.clone())));
        workflow.run(json!({})).await.unwrap()["reached"].clone()
    }

    /// "the state level (local) error handling should have precedence"; the workflow's handler
    /// catches what the state's does not.
    #[tokio::test]
    async fn the_state_s_handler_wins_for_its_error() {
        assert_eq!(
            reached(FunctionError::named("Known", "x")).await,
            "StateHandler"
        );
        assert_eq!(
            reached(FunctionError::named("Other", "x")).await,
            "WorkflowHandler"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// EVENT states
// ---------------------------------------------------------------------------------------------

mod events {
    use super::*;
    use swf_runtime::{ExecStatus, Io};

    swf_runtime::workflow!("workflows/v01/events.sw.yaml");

    const HOUR: Duration = Duration::from_secs(3600);

    /// `ship` answers with a tracking number and a carrier, after `delay`.
    struct Warehouse {
        calls: Calls,
        delay: Duration,
    }

    impl Warehouse {
        fn new(delay: Duration) -> Self {
            Self {
                calls: Calls::new(|_, _| Ok(json!({"tracking": "T-1", "carrier": "post"}))),
                delay,
            }
        }
    }

    impl V01EventsFunctions for Warehouse {
        async fn ship(&self, args: Value) -> Result<Value, FunctionError> {
            tokio::time::sleep(self.delay).await;
            self.calls.call(args)
        }
    }

    fn event(kind: V01EventsEvent, id: &str, data: Value) -> swf_runtime::CloudEvent {
        kind.event(id, data).unwrap()
    }

    fn deliver_after(io: &Io, after: Duration, kind: V01EventsEvent, id: &str, data: Value) {
        let io = io.clone();
        let event = event(kind, id, data);
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            io.deliver(event).await.unwrap();
        });
    }

    /// The first entry's condition holds once both events have arrived: their data is merged,
    /// the action gets the order (`inputPath`), and only the tracking number of its result is
    /// kept (`outputPath`), at `$.shipment` (`resultPath`).
    #[tokio::test(start_paused = true)]
    async fn order_and_payment_ship_the_order() {
        let workflow = V01EventsWorkflow::new(Warehouse::new(Duration::ZERO));
        let io = Io::standalone();
        deliver_after(
            &io,
            MINUTE,
            V01EventsEvent::PaymentReceived,
            "p1",
            json!({"paid": 40}),
        );
        deliver_after(
            &io,
            2 * MINUTE,
            V01EventsEvent::OrderPlaced,
            "o1",
            json!({"order": {"id": 7}}),
        );
        let start = Instant::now();
        let result = workflow.run_with(json!({"customer": "Ann"}), &io).await;
        assert_eq!(start.elapsed(), 2 * MINUTE);
        assert_eq!(ExecStatus::of(&result), ExecStatus::Success);
        assert_eq!(
            result.unwrap(),
            json!({
                "customer": "Ann",
                "paid": 40,
                "order": {"id": 7},
                "shipment": "T-1",
                "status": "shipped"
            })
        );
        assert_eq!(workflow.functions().calls.args(), [json!({"id": 7})]);
    }

    /// The second entry: the cancellation's reason is placed at `$.cancellation.reason`; no
    /// action runs.
    #[tokio::test(start_paused = true)]
    async fn a_cancellation_cancels() {
        let workflow = V01EventsWorkflow::new(Warehouse::new(Duration::ZERO));
        let io = Io::standalone();
        deliver_after(
            &io,
            MINUTE,
            V01EventsEvent::OrderPlaced,
            "o1",
            json!({"order": {"id": 7}}),
        );
        deliver_after(
            &io,
            2 * MINUTE,
            V01EventsEvent::OrderCancelled,
            "c1",
            json!({"reason": "changed my mind", "by": "Ann"}),
        );
        let output = workflow.run_with(json!({}), &io).await.unwrap();
        assert_eq!(
            output,
            json!({"cancellation": {"reason": "changed my mind"}, "status": "cancelled"})
        );
        assert!(workflow.functions().calls.args().is_empty());
    }

    /// Nothing that completes a condition within the hour: the timed entry's transition, without
    /// its actions.
    #[tokio::test(start_paused = true)]
    async fn an_hour_without_payment_cancels() {
        let workflow = V01EventsWorkflow::new(Warehouse::new(Duration::ZERO));
        let io = Io::standalone();
        deliver_after(
            &io,
            MINUTE,
            V01EventsEvent::OrderPlaced,
            "o1",
            json!({"order": {"id": 7}}),
        );
        let start = Instant::now();
        let output = workflow
            .run_with(json!({"customer": "Ann"}), &io)
            .await
            .unwrap();
        assert_eq!(start.elapsed(), HOUR);
        assert_eq!(output, json!({"customer": "Ann", "status": "cancelled"}));
        assert!(workflow.functions().calls.args().is_empty());
    }

    /// A run halted by an action's timeout reports `Timeout`; by any other error, `Fail`.
    #[tokio::test(start_paused = true)]
    async fn a_slow_warehouse_reports_a_timeout_status() {
        let workflow = V01EventsWorkflow::new(Warehouse::new(HOUR));
        let io = Io::standalone();
        io.deliver(event(
            V01EventsEvent::OrderPlaced,
            "o1",
            json!({"order": {}}),
        ))
        .await
        .unwrap();
        io.deliver(event(V01EventsEvent::PaymentReceived, "p1", json!({})))
            .await
            .unwrap();
        let result = workflow.run_with(json!({}), &io).await;
        assert_eq!(ExecStatus::of(&result), ExecStatus::Timeout);
        assert_eq!(result.unwrap_err().task(), "WaitForOrder");
    }
}
