//! The property test's batch (issue 9): workflows of every dialect generated from a grammar with
//! a fixed seed (`swf-codegen/tests/grammar.rs` writes them and checks that they are up to
//! date), each compiled by the macro and run to its end from a few inputs, its function
//! answering every call.

use swf_runtime::{FunctionError, Value, json};

/// Every generated workflow calls `work`.
struct Work;

macro_rules! batch {
    ($($module:ident: $path:literal => $workflow:ident, $functions:ident;)*) => {
        $(
            mod $module {
                swf_runtime::workflow!($path);
            }

            impl $module::$functions for Work {
                async fn work(&self, args: Value) -> Result<Value, FunctionError> {
                    Ok(json!({"seen": args}))
                }
            }
        )*

        /// Each input takes another route through the switches (`$.n` is compared with 0..3).
        #[tokio::test(start_paused = true)]
        async fn every_generated_workflow_runs_to_its_end() {
            let mut failures = Vec::new();
            for n in [0, 1, 3, 7] {
                $(
                    match $module::$workflow::new(Work).run(json!({"n": n})).await {
                        Ok(output) if output.is_object() || output.is_array() => {}
                        Ok(output) => failures.push(format!("{} with n = {n}: output {output}", $path)),
                        Err(error) => failures.push(format!("{} with n = {n}: {error}", $path)),
                    }
                )*
            }
            assert!(failures.is_empty(), "{}", failures.join("\n"));
        }
    };
}

batch! {
    gtasks0: "workflows/generated/gtasks0.sw.yaml" => Gtasks0Workflow, Gtasks0Functions;
    gstates0: "workflows/generated/gstates0.sw.yaml" => Gstates0Workflow, Gstates0Functions;
    gv010: "workflows/generated/gv010.sw.yaml" => Gv010Workflow, Gv010Functions;
    gfirst0: "workflows/generated/gfirst0.sw.yaml" => Gfirst0Workflow, Gfirst0Functions;
    gsecond0: "workflows/generated/gsecond0.sw.yaml" => Gsecond0Workflow, Gsecond0Functions;
    gtasks1: "workflows/generated/gtasks1.sw.yaml" => Gtasks1Workflow, Gtasks1Functions;
    gstates1: "workflows/generated/gstates1.sw.yaml" => Gstates1Workflow, Gstates1Functions;
    gv011: "workflows/generated/gv011.sw.yaml" => Gv011Workflow, Gv011Functions;
    gfirst1: "workflows/generated/gfirst1.sw.yaml" => Gfirst1Workflow, Gfirst1Functions;
    gsecond1: "workflows/generated/gsecond1.sw.yaml" => Gsecond1Workflow, Gsecond1Functions;
    gtasks2: "workflows/generated/gtasks2.sw.yaml" => Gtasks2Workflow, Gtasks2Functions;
    gstates2: "workflows/generated/gstates2.sw.yaml" => Gstates2Workflow, Gstates2Functions;
    gv012: "workflows/generated/gv012.sw.yaml" => Gv012Workflow, Gv012Functions;
    gfirst2: "workflows/generated/gfirst2.sw.yaml" => Gfirst2Workflow, Gfirst2Functions;
    gsecond2: "workflows/generated/gsecond2.sw.yaml" => Gsecond2Workflow, Gsecond2Functions;
    gtasks3: "workflows/generated/gtasks3.sw.yaml" => Gtasks3Workflow, Gtasks3Functions;
    gstates3: "workflows/generated/gstates3.sw.yaml" => Gstates3Workflow, Gstates3Functions;
    gv013: "workflows/generated/gv013.sw.yaml" => Gv013Workflow, Gv013Functions;
    gfirst3: "workflows/generated/gfirst3.sw.yaml" => Gfirst3Workflow, Gfirst3Functions;
    gsecond3: "workflows/generated/gsecond3.sw.yaml" => Gsecond3Workflow, Gsecond3Functions;
    gtasks4: "workflows/generated/gtasks4.sw.yaml" => Gtasks4Workflow, Gtasks4Functions;
    gstates4: "workflows/generated/gstates4.sw.yaml" => Gstates4Workflow, Gstates4Functions;
    gv014: "workflows/generated/gv014.sw.yaml" => Gv014Workflow, Gv014Functions;
    gfirst4: "workflows/generated/gfirst4.sw.yaml" => Gfirst4Workflow, Gfirst4Functions;
    gsecond4: "workflows/generated/gsecond4.sw.yaml" => Gsecond4Workflow, Gsecond4Functions;
}
