swf_runtime::workflow!("../../../../tests/ui/transition_and_end.sw.yaml");

fn main() {}
