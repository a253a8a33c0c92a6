swf_runtime::workflow!("ui/v01_event_comparison.sw.yaml");

fn main() {}
