swf_runtime::workflow!("../../../../tests/ui/kebab_next_state_spelling.sw.yaml");

fn main() {}
