swf_runtime::workflow!("../../../../tests/ui/unknown_target.sw.yaml");

fn main() {}
