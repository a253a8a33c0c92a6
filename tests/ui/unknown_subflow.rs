// The sub-flow's workflowId must be the id of a workflow compiled together with the caller.
swf_runtime::workflow!(
    "../../../../tests/ui/unknown_subflow.sw.yaml",
    "../../../../tests/ui/callee.sw.yaml"
);

fn main() {}
