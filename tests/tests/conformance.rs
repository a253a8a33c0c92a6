//! Conformance: the tasks draft's (`004`) own worked examples, compiled by `workflow!` and run,
//! each asserting the data the draft says it produces.
//!
//! Every workflow file in `workflows/conformance/` copies the draft's YAML or JSON as closely as
//! possible, and says in a comment what had to be added to make it a complete workflow and from
//! which section of the draft that comes. Retry tests run on tokio's paused clock, so the waits the
//! draft describes (minutes long) are measured exactly in virtual time.

use std::time::Duration;

use swf_runtime::{FunctionError, Value, json};

const MINUTE: Duration = Duration::from_secs(60);

use swf_tests::scripted::Calls;

fn minutes(list: &[u32]) -> Vec<Duration> {
    list.iter().map(|&m| m * MINUTE).collect()
}

/// The error object as the drafts expose it to tasks, for a function error with no trace.
fn error_data(name: &str, message: &str) -> Value {
    json!({"name": name, "message": message, "trace": ""})
}

/// For workflows that call no function.
struct NoFunctions;

// ---------------------------------------------------------------------------------------------
// "Inject Task"
// ---------------------------------------------------------------------------------------------

mod inject_person {
    use super::*;

    swf_runtime::workflow!("workflows/conformance/inject_person.sw.yaml");

    impl InjectPersonFunctions for NoFunctions {}

    /// "The data output of the "SimpleInjectTask" which then is passed as input to the transition
    /// task would be:" the person, exactly.
    #[tokio::test]
    async fn output_is_the_injected_person() {
        let output = InjectPersonWorkflow::new(NoFunctions)
            .run(json!({}))
            .await
            .unwrap();
        assert_eq!(
            output,
            json!({
             "person": {
                  "fname": "John",
                  "lname": "Doe",
                  "address": "1234 SomeStreet",
                  "age": 40
             }
            })
        );
    }

    /// SimpleInjectTask's output is what GreetPersonTask (its transition) receives.
    #[tokio::test]
    async fn the_person_is_passed_to_the_transition_task() {
        let workflow = InjectPersonWorkflow::new(NoFunctions);
        let state = workflow.start(json!({})).unwrap();
        assert_eq!(state.task_name(), Some("SimpleInjectTask"));
        let state = workflow.step(state).await.unwrap();
        assert_eq!(state.task_name(), Some("GreetPersonTask"));
        assert_eq!(
            state,
            InjectPersonState::GreetPersonTask {
                data: json!({"person": {
                    "fname": "John",
                    "lname": "Doe",
                    "address": "1234 SomeStreet",
                    "age": 40
                }})
            }
        );
    }

    /// "If the inject task already receives a data input from the previous transition task, the
    /// inject data should be merged with its data input."
    #[tokio::test]
    async fn inject_data_merges_with_the_data_input() {
        let output = InjectPersonWorkflow::new(NoFunctions)
            .run(json!({
                "greeting": "Hello",
                "person": {"email": "john@example.com", "age": 39}
            }))
            .await
            .unwrap();
        assert_eq!(
            output,
            json!({
                "greeting": "Hello",
                "person": {
                    "email": "john@example.com",
                    "fname": "John",
                    "lname": "Doe",
                    "address": "1234 SomeStreet",
                    "age": 40
                }
            })
        );
    }
}

mod inject_people {
    use super::*;

    swf_runtime::workflow!("workflows/conformance/inject_people.sw.yaml");

    impl InjectPeopleFunctions for NoFunctions {}

    /// The filtered people are SimpleInjectTask's data output, "passed as data input to the
    /// transition task".
    #[tokio::test]
    async fn the_people_younger_than_40_are_passed_to_the_transition_task() {
        let workflow = InjectPeopleWorkflow::new(NoFunctions);
        let state = workflow.start(json!({})).unwrap();
        let state = workflow.step(state).await.unwrap();
        assert_eq!(
            state,
            InjectPeopleState::GreetPersonTask {
                data: json!([
                    {"fname": "Marry", "lname": "Allice", "address": "1234 SomeStreet", "age": 25},
                    {"fname": "Kelly", "lname": "Mill", "address": "1234 SomeStreet", "age": 30}
                ])
            }
        );
    }

    /// "In which case the tasks data output would include people who's age is less than 40":
    /// Marry and Kelly, in document order.
    #[tokio::test]
    async fn output_is_the_people_younger_than_40() {
        let output = InjectPeopleWorkflow::new(NoFunctions)
            .run(json!({}))
            .await
            .unwrap();
        assert_eq!(
            output,
            json!([
                {
                   "fname": "Marry",
                   "lname": "Allice",
                   "address": "1234 SomeStreet",
                   "age": 25
                },
                {
                   "fname": "Kelly",
                   "lname": "Mill",
                   "address": "1234 SomeStreet",
                   "age": 30
                }
            ])
        );
    }
}

mod inject_people_testing {
    use super::*;

    swf_runtime::workflow!("workflows/conformance/inject_people_testing.sw.yaml");

    impl InjectPeopleTestingFunctions for NoFunctions {}

    /// "You can change your output path easily during testing, for example:
    /// `$.people[?(@.age >= 40)]`": only John.
    #[tokio::test]
    async fn output_is_the_people_aged_40_or_more() {
        let output = InjectPeopleTestingWorkflow::new(NoFunctions)
            .run(json!({}))
            .await
            .unwrap();
        assert_eq!(
            output,
            json!([
                {
                   "fname": "John",
                   "lname": "Doe",
                   "address": "1234 SomeStreet",
                   "age": 40
                }
            ])
        );
    }
}

// ---------------------------------------------------------------------------------------------
// "Task information filtering - Task Data Filter"
// ---------------------------------------------------------------------------------------------

/// "For our example the data input to our task is as follows:"
fn fruits_and_vegetables() -> Value {
    json!({
      "fruits": [ "apple", "orange", "pear" ],
      "vegetables": [
        {
          "veggieName": "potato",
          "veggieLike": true
        },
        {
          "veggieName": "broccoli",
          "veggieLike": false
        }
      ]
    })
}

mod fruits_only {
    use super::*;

    swf_runtime::workflow!("workflows/conformance/fruits_only.sw.yaml");

    impl FruitsOnlyFunctions for NoFunctions {}

    /// "The task data output then would include only the fruits data."
    #[tokio::test]
    async fn output_is_only_the_fruits() {
        let output = FruitsOnlyWorkflow::new(NoFunctions)
            .run(fruits_and_vegetables())
            .await
            .unwrap();
        assert_eq!(output, json!(["apple", "orange", "pear"]));
    }

    /// "If inputPath is not defined, or it does not select any parts of the tasks data input, the
    /// tasks data input is not filtered."
    #[tokio::test]
    async fn input_without_fruits_is_not_filtered() {
        let input = json!({"vegetables": fruits_and_vegetables()["vegetables"].clone()});
        let output = FruitsOnlyWorkflow::new(NoFunctions)
            .run(input.clone())
            .await
            .unwrap();
        assert_eq!(output, input);
    }
}

mod vegetables_first_way {
    use super::*;

    swf_runtime::workflow!("workflows/conformance/vegetables_first_way.sw.yaml");

    impl VegetablesFirstWayFunctions for NoFunctions {}

    /// "The tasks data input filter selects all the vegetables from the main data input. [...] the
    /// dataOutputPath of the task filter selects only the vegetables which are "veggie like"."
    #[tokio::test]
    async fn output_is_only_the_veggie_like_vegetables() {
        let output = VegetablesFirstWayWorkflow::new(NoFunctions)
            .run(fruits_and_vegetables())
            .await
            .unwrap();
        assert_eq!(
            output,
            json!([{"veggieName": "potato", "veggieLike": true}])
        );
    }

    /// During the task, its data is all the vegetables (the data input filter); only the output
    /// filter keeps the veggie-like ones.
    #[tokio::test]
    async fn the_input_filter_selects_all_the_vegetables() {
        let workflow = VegetablesFirstWayWorkflow::new(NoFunctions);
        let state = workflow.start(fruits_and_vegetables()).unwrap();
        assert_eq!(
            state,
            VegetablesFirstWayState::VegetablesOnlyTask {
                data: fruits_and_vegetables()["vegetables"].clone()
            }
        );
        let state = workflow.step(state).await.unwrap();
        assert_eq!(
            state,
            VegetablesFirstWayState::SomeNextTask {
                data: json!([{"veggieName": "potato", "veggieLike": true}])
            }
        );
    }
}

mod vegetables_second_way {
    use super::*;

    swf_runtime::workflow!("workflows/conformance/vegetables_second_way.sw.yaml");

    impl VegetablesSecondWayFunctions for NoFunctions {}

    /// "The second way would be to directly filter only the "veggie like" vegetables with just the
    /// data input path."
    #[tokio::test]
    async fn output_is_only_the_veggie_like_vegetables() {
        let output = VegetablesSecondWayWorkflow::new(NoFunctions)
            .run(fruits_and_vegetables())
            .await
            .unwrap();
        assert_eq!(
            output,
            json!([{"veggieName": "potato", "veggieLike": true}])
        );
    }
}

// ---------------------------------------------------------------------------------------------
// "Retry Definition"
// ---------------------------------------------------------------------------------------------

mod retry_multiplier {
    use super::*;

    swf_runtime::workflow!("workflows/conformance/retry_multiplier.sw.yaml");

    impl RetryMultiplierFunctions for Calls {
        async fn unreliable_function(&self, args: Value) -> Result<Value, FunctionError> {
            self.call(args)
        }
    }

    /// "which means that we will retry 4 times after waiting 1, 3 (1 + 2), 5 (1 + 2 + 2), and
    /// 7 (1 + 2 + 2 + 2) minutes."
    #[tokio::test(start_paused = true)]
    async fn retries_4_times_after_waiting_1_3_5_and_7_minutes() {
        let workflow = RetryMultiplierWorkflow::new(Calls::new(|n, _| {
            Err(FunctionError::new(format!("attempt {} failed", n + 1)))
        }));
        let error = workflow.run(json!({"order": 7})).await.unwrap_err();

        let calls = workflow.functions();
        assert_eq!(calls.gaps(), minutes(&[1, 3, 5, 7]));
        assert_eq!(calls.times(), minutes(&[0, 1, 4, 9, 16]));
        assert_eq!(error.task(), "RetriedTask");
        assert_eq!(error.error().name, "FunctionExecutionError");
        assert_eq!(error.error().message, "attempt 5 failed");
    }

    /// The fourth retry (after a 7-minute wait) is the last one allowed; when it succeeds, the task
    /// completes with the function's result.
    #[tokio::test(start_paused = true)]
    async fn the_fourth_retry_can_succeed() {
        let workflow = RetryMultiplierWorkflow::new(Calls::new(|n, _| {
            if n < 4 {
                Err(FunctionError::new("not yet"))
            } else {
                Ok(json!({"done": true}))
            }
        }));
        let output = workflow.run(json!({"order": 7})).await.unwrap();

        assert_eq!(output, json!({"order": 7, "done": true}));
        assert_eq!(workflow.functions().gaps(), minutes(&[1, 3, 5, 7]));
        assert_eq!(workflow.functions().args(), vec![json!({"order": 7}); 5]);
    }
}

// ---------------------------------------------------------------------------------------------
// "Workflow Error Handling - Retrying": the first example
// ---------------------------------------------------------------------------------------------

mod retrying {
    use super::*;

    swf_runtime::workflow!("workflows/conformance/retrying.sw.yaml");

    impl RetryingFunctions for Calls {
        async fn unreliable_function(&self, args: Value) -> Result<Value, FunctionError> {
            self.call(args)
        }
    }

    /// "The first one matches an error with name "FunctionExecutionError" and defines the maximum
    /// number of attempts to be 3. The interval value defines the amount of time to wait before
    /// each retry attempt, in this case two minutes."
    #[tokio::test(start_paused = true)]
    async fn function_execution_error_is_retried_3_times_2_minutes_apart() {
        let workflow = RetryingWorkflow::new(Calls::new(|n, _| {
            Err(FunctionError::new(format!("attempt {} failed", n + 1)))
        }));
        let error = workflow.run(json!({"order": 7})).await.unwrap_err();

        assert_eq!(workflow.functions().times(), minutes(&[0, 2, 4, 6]));
        assert_eq!(error.task(), "RetriedTask");
        assert_eq!(error.error().name, "FunctionExecutionError");
        assert_eq!(error.error().message, "attempt 4 failed");
        assert_eq!(error.data()["order"], json!(7));
    }

    /// "The second retry definition defines that for any errors other than
    /// "FunctionExecutionError", no retries should be performed (maxAttempts is set to zero)."
    #[tokio::test(start_paused = true)]
    async fn other_errors_are_not_retried() {
        let workflow = RetryingWorkflow::new(Calls::new(|_, _| {
            Err(FunctionError::named(
                "PermissionDenied",
                "Write permission denied on file: '/xxx/yyy'",
            ))
        }));
        let error = workflow.run(json!({"order": 7})).await.unwrap_err();

        assert_eq!(workflow.functions().times(), minutes(&[0]));
        assert_eq!(error.task(), "RetriedTask");
        assert_eq!(error.error().name, "PermissionDenied");
        assert_eq!(
            error.error().message,
            "Write permission denied on file: '/xxx/yyy'"
        );
    }

    /// A retry that succeeds completes the task, restarted from its input: the failed attempts'
    /// error data is not in the output.
    #[tokio::test(start_paused = true)]
    async fn a_retry_that_succeeds_completes_the_task() {
        let workflow = RetryingWorkflow::new(Calls::new(|n, _| {
            if n < 2 {
                Err(FunctionError::new("busy"))
            } else {
                Ok(json!({"written": true}))
            }
        }));
        let output = workflow.run(json!({"order": 7})).await.unwrap();

        assert_eq!(workflow.functions().times(), minutes(&[0, 2, 4]));
        assert_eq!(output, json!({"order": 7, "written": true}));
    }
}

// ---------------------------------------------------------------------------------------------
// "Restricting Transitions based on task output"
// ---------------------------------------------------------------------------------------------

mod restricted_transition {
    use super::*;

    swf_runtime::workflow!("workflows/conformance/restricted_transition.sw.yaml");

    struct Operations {
        low: Calls,
        high: Calls,
    }

    impl Operations {
        /// `doLowRistOperationFunction` returns `low_result`; `doHighRistOperationFunction`
        /// returns `{"highRiskDone": true}`.
        fn new(low_result: Value) -> Self {
            Self {
                low: Calls::new(move |_, _| Ok(low_result.clone())),
                high: Calls::new(|_, _| Ok(json!({"highRiskDone": true}))),
            }
        }
    }

    impl RestrictedTransitionFunctions for Operations {
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

    const CONDITION: &str = "#jsonPath(taskOutputData,'$..user.title') eq 'MANAGER'";

    /// "only allows transition to the "highRiskTask" if the output of the task to transition from
    /// includes an user with the title "MANAGER"."
    #[tokio::test]
    async fn a_manager_reaches_high_risk_task() {
        let workflow = RestrictedTransitionWorkflow::new(Operations::new(
            json!({"user": {"name": "Jane", "title": "MANAGER"}}),
        ));
        let input = json!({"request": "wire transfer"});

        let state = workflow.start(input.clone()).unwrap();
        assert_eq!(state.task_name(), Some("lowRiskTask"));
        let state = workflow.step(state).await.unwrap();
        assert_eq!(state.task_name(), Some("highRiskTask"));
        let after_low = json!({
            "request": "wire transfer",
            "user": {"name": "Jane", "title": "MANAGER"}
        });
        assert_eq!(
            state,
            RestrictedTransitionState::HighRiskTask {
                data: after_low.clone()
            }
        );
        let state = workflow.step(state).await.unwrap();
        assert_eq!(
            state.output(),
            Some(&json!({
                "request": "wire transfer",
                "user": {"name": "Jane", "title": "MANAGER"},
                "highRiskDone": true
            }))
        );
        let functions = workflow.functions();
        assert_eq!(functions.low.args(), [input]);
        assert_eq!(functions.high.args(), [after_low]);
    }

    /// `$..user.title` finds the user wherever it is in the task output.
    #[tokio::test]
    async fn a_nested_manager_reaches_high_risk_task() {
        let workflow = RestrictedTransitionWorkflow::new(Operations::new(
            json!({"approval": {"user": {"title": "MANAGER"}}}),
        ));
        let output = workflow.run(json!({})).await.unwrap();
        assert_eq!(
            output,
            json!({"approval": {"user": {"title": "MANAGER"}}, "highRiskDone": true})
        );
        assert_eq!(workflow.functions().high.times().len(), 1);
    }

    /// "The default should be that if this happens workflow execution should halt and a detailed
    /// message on why the transition failed should be provided."
    async fn assert_halts(low_result: Value) {
        let workflow = RestrictedTransitionWorkflow::new(Operations::new(low_result.clone()));
        let error = workflow
            .run(json!({"request": "wire transfer"}))
            .await
            .unwrap_err();

        assert_eq!(error.task(), "lowRiskTask");
        assert_eq!(error.error().name, "TransitionConditionError");
        let message = &error.error().message;
        for part in ["lowRiskTask", "highRiskTask", CONDITION] {
            assert!(message.contains(part), "{message:?} does not name {part:?}");
        }
        let mut output = json!({"request": "wire transfer"});
        if let (Some(output), Some(result)) = (output.as_object_mut(), low_result.as_object()) {
            output.extend(result.clone());
        }
        assert_eq!(*error.data(), output);
        assert_eq!(workflow.functions().low.times().len(), 1);
        assert!(workflow.functions().high.times().is_empty());
    }

    #[tokio::test]
    async fn a_clerk_halts_the_workflow() {
        assert_halts(json!({"user": {"name": "Joe", "title": "CLERK"}})).await;
    }

    #[tokio::test]
    async fn no_user_halts_the_workflow() {
        assert_halts(json!({"status": "ok"})).await;
    }
}

// ---------------------------------------------------------------------------------------------
// "Workflow Error Handling": the onError example
// ---------------------------------------------------------------------------------------------

mod on_error {
    use super::*;

    swf_runtime::workflow!("workflows/conformance/on_error.sw.yaml");

    impl OnErrorFunctions for Calls {
        async fn unreliable_function(&self, args: Value) -> Result<Value, FunctionError> {
            self.call(args)
        }
    }

    /// "The first one handles the error which name property is "FunctionExecutionError" and
    /// declares to transition to the "afterFunctionErrorTask" task in case this error is
    /// encountered."
    #[tokio::test(start_paused = true)]
    async fn function_execution_error_goes_to_after_function_error_task() {
        let workflow = OnErrorWorkflow::new(Calls::new(|_, _| {
            Err(FunctionError::new(
                "Write permission denied on file: '/xxx/yyy'",
            ))
        }));
        let output = workflow.run(json!({"file": "/xxx/yyy"})).await.unwrap();

        assert_eq!(workflow.functions().times(), minutes(&[0]));
        assert_eq!(
            output,
            json!({
                "file": "/xxx/yyy",
                "error": error_data(
                    "FunctionExecutionError",
                    "Write permission denied on file: '/xxx/yyy'"
                ),
                "reached": "afterFunctionErrorTask"
            })
        );
    }

    /// "The second element handles all errors except "FunctionExecutionError"."
    #[tokio::test(start_paused = true)]
    async fn any_other_error_goes_to_after_any_other_error_task() {
        let workflow = OnErrorWorkflow::new(Calls::new(|_, _| {
            Err(FunctionError::named("PermissionDenied", "no write access")
                .with_trace("at com.MyFunction.methodXYZ(MyFunction.java:13)"))
        }));
        let output = workflow.run(json!({"file": "/xxx/yyy"})).await.unwrap();

        assert_eq!(workflow.functions().times(), minutes(&[0]));
        assert_eq!(
            output,
            json!({
                "file": "/xxx/yyy",
                "error": {
                    "name": "PermissionDenied",
                    "message": "no write access",
                    "trace": "at com.MyFunction.methodXYZ(MyFunction.java:13)"
                },
                "reached": "afterAnyOtherErrorTask"
            })
        );
    }

    /// Without an error, onError plays no part: the task takes its transition.
    #[tokio::test(start_paused = true)]
    async fn success_takes_the_transition() {
        let workflow = OnErrorWorkflow::new(Calls::new(|_, _| Ok(json!({"written": true}))));
        let output = workflow.run(json!({"file": "/xxx/yyy"})).await.unwrap();
        assert_eq!(
            output,
            json!({"file": "/xxx/yyy", "written": true, "reached": "afterSuccessTask"})
        );
    }
}

// ---------------------------------------------------------------------------------------------
// "Workflow Error Handling - Retrying": the combined retry and onError example, in the draft's
// YAML (bare names in the retry expressions) and JSON (`$.error.name`) versions.
// ---------------------------------------------------------------------------------------------

/// The tests of the combined example, for the workflow type `$workflow` with functions trait
/// `$functions`.
macro_rules! retry_then_on_error_tests {
    ($workflow:ident, $functions:ident) => {
        impl $functions for Calls {
            async fn unreliable_function(&self, args: Value) -> Result<Value, FunctionError> {
                self.call(args)
            }
        }

        /// "In this example in case the "FunctionExecutionError" occurs, first it will be
        /// retried 3 times with 2 minute intervals. If the error occurs after the maxAttempts is
        /// reached, the onError definition kicks in transitioning the workflow to the
        /// "afterFunctionErrorTask" task."
        #[tokio::test(start_paused = true)]
        async fn function_execution_error_retried_3_times_then_after_function_error_task() {
            let workflow = $workflow::new(Calls::new(|n, _| {
                Err(FunctionError::new(format!("attempt {} failed", n + 1)))
            }));
            let output = workflow.run(json!({"file": "/xxx/yyy"})).await.unwrap();

            assert_eq!(workflow.functions().times(), minutes(&[0, 2, 4, 6]));
            assert_eq!(workflow.functions().gaps(), minutes(&[2, 2, 2]));
            assert_eq!(
                output,
                json!({
                    "file": "/xxx/yyy",
                    "error": error_data("FunctionExecutionError", "attempt 4 failed"),
                    "reached": "afterFunctionErrorTask"
                })
            );
        }

        /// "In case of any other errors, they will be retried 2 times with 1 minute intervals.
        /// If those errors occur after two max 2 retries, the onError definition tasks that
        /// workflow should transition to the "afterAnyOtherErrorTask" task."
        #[tokio::test(start_paused = true)]
        async fn other_error_retried_2_times_then_after_any_other_error_task() {
            let workflow = $workflow::new(Calls::new(|n, _| {
                Err(FunctionError::named(
                    "PermissionDenied",
                    format!("attempt {} denied", n + 1),
                ))
            }));
            let output = workflow.run(json!({"file": "/xxx/yyy"})).await.unwrap();

            assert_eq!(workflow.functions().times(), minutes(&[0, 1, 2]));
            assert_eq!(workflow.functions().gaps(), minutes(&[1, 1]));
            assert_eq!(
                output,
                json!({
                    "file": "/xxx/yyy",
                    "error": error_data("PermissionDenied", "attempt 3 denied"),
                    "reached": "afterAnyOtherErrorTask"
                })
            );
        }

        /// A retry that succeeds takes the task's own transition, from the task's input: no
        /// error data is left in the output.
        #[tokio::test(start_paused = true)]
        async fn a_retry_that_succeeds_takes_the_transition() {
            let workflow = $workflow::new(Calls::new(|n, _| {
                if n < 3 {
                    Err(FunctionError::new("busy"))
                } else {
                    Ok(json!({"written": true}))
                }
            }));
            let output = workflow.run(json!({"file": "/xxx/yyy"})).await.unwrap();

            assert_eq!(workflow.functions().times(), minutes(&[0, 2, 4, 6]));
            assert_eq!(
                output,
                json!({"file": "/xxx/yyy", "written": true, "reached": "afterSuccessTask"})
            );
        }
    };
}

mod retry_on_error {
    use super::*;

    swf_runtime::workflow!("workflows/conformance/retry_on_error.sw.yaml");

    retry_then_on_error_tests!(RetryOnErrorWorkflow, RetryOnErrorFunctions);
}

mod retry_on_error_json {
    use super::*;

    swf_runtime::workflow!("workflows/conformance/retry_on_error_json.sw.yaml");

    retry_then_on_error_tests!(RetryOnErrorJsonWorkflow, RetryOnErrorJsonFunctions);
}

// ---------------------------------------------------------------------------------------------
// "Task information filtering - Using multiple filters", as an operation task
// ---------------------------------------------------------------------------------------------

mod greeting {
    use super::*;

    swf_runtime::workflow!("workflows/conformance/greeting.sw.yaml");

    impl GreetingFunctions for Calls {
        async fn greeting_function(&self, args: Value) -> Result<Value, FunctionError> {
            self.call(args)
        }
    }

    /// The draft's workflow input, with the customer that its event would have brought (step (2)).
    fn input() -> Value {
        json!({
          "hello": {
            "english": "Hello",
            "spanish": "Hola",
            "german": "Hallo",
            "russian": ""
          },
          "goodbye": {
            "english": "Goodbye",
            "spanish": "Adis",
            "german": "Auf Wiedersehen",
            "russian": ""
          },
          "customer": {
            "name": "John Michaels",
            "address": "111 Some Street, SomeCity, SomeCountry",
            "age": 40
          }
        })
    }

    /// "The action then calls the "greetingFunction" serverless function passing in as
    /// parameters the spanish greeting and the name of the customer that arrived." [...]
    /// "Because our event task is also an end task, its data output becomes the final workflow
    /// data output namely: "Hola John Michaels!""
    #[tokio::test]
    async fn output_is_the_final_customer_greeting() {
        let workflow = GreetingWorkflow::new(Calls::new(|_, args| {
            let greeting = args["greeting"].as_str().unwrap_or_default();
            let name = args["customerName"].as_str().unwrap_or_default();
            Ok(json!(format!("{greeting} {name}!")))
        }));
        let output = workflow.run(input()).await.unwrap();

        assert_eq!(
            workflow.functions().args(),
            [json!({"greeting": "Hola", "customerName": "John Michaels"})]
        );
        assert_eq!(output, json!("Hola John Michaels!"));
    }
}
