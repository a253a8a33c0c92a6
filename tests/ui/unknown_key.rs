swf_runtime::workflow!("../../../../tests/ui/unknown_key.sw.yaml");

fn main() {}
