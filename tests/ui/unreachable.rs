swf_runtime::workflow!("../../../../tests/ui/unreachable.sw.yaml");

fn main() {}
