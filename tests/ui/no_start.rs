swf_runtime::workflow!("../../../../tests/ui/no_start.sw.yaml");

fn main() {}
