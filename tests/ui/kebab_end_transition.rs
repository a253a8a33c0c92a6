swf_runtime::workflow!("ui/kebab_end_transition.sw.yaml");

fn main() {}
