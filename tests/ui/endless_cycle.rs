swf_runtime::workflow!("../../../../tests/ui/endless_cycle.sw.yaml");

fn main() {}
