swf_runtime::workflow!("ui/unknown_task_type.sw.yaml");

fn main() {}
