swf_runtime::workflow!("../../../../tests/ui/many_starts.sw.yaml");

fn main() {}
