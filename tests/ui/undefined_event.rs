swf_runtime::workflow!("ui/undefined_event.sw.yaml");

fn main() {}
