swf_runtime::workflow!("../../../../tests/ui/undefined_event.sw.yaml");

fn main() {}
