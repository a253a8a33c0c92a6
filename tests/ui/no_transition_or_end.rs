swf_runtime::workflow!("ui/no_transition_or_end.sw.yaml");

fn main() {}
