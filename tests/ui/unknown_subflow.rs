// The sub-flow's workflowId must be the id of a workflow compiled together with the caller.
swf_runtime::workflow!(
    "ui/unknown_subflow.sw.yaml",
    "ui/callee.sw.yaml"
);

fn main() {}
