swf_runtime::workflow!("ui/unreachable.sw.yaml");

fn main() {}
