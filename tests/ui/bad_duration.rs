swf_runtime::workflow!("../../../../tests/ui/bad_duration.sw.yaml");

fn main() {}
