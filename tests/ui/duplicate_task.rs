swf_runtime::workflow!("../../../../tests/ui/duplicate_task.sw.yaml");

fn main() {}
