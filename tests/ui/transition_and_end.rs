swf_runtime::workflow!("ui/transition_and_end.sw.yaml");

fn main() {}
