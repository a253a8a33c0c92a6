swf_runtime::workflow!("../../../../tests/ui/v01_event_comparison.sw.yaml");

fn main() {}
