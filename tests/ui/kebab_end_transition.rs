swf_runtime::workflow!("../../../../tests/ui/kebab_end_transition.sw.yaml");

fn main() {}
