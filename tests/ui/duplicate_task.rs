swf_runtime::workflow!("ui/duplicate_task.sw.yaml");

fn main() {}
