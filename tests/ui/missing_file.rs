swf_runtime::workflow!("../../../../tests/ui/does_not_exist.sw.yaml");

fn main() {}
