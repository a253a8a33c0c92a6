swf_runtime::workflow!("../../../../tests/ui/no_transition_or_end.sw.yaml");

fn main() {}
