swf_runtime::workflow!("ui/endless_cycle.sw.yaml");

fn main() {}
