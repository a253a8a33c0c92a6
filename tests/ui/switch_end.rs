swf_runtime::workflow!("../../../../tests/ui/switch_end.sw.yaml");

fn main() {}
