swf_runtime::workflow!("/etc/workflow.sw.yaml");

fn main() {}
