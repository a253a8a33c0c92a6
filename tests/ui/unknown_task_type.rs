swf_runtime::workflow!("../../../../tests/ui/unknown_task_type.sw.yaml");

fn main() {}
