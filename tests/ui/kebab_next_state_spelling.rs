swf_runtime::workflow!("ui/kebab_next_state_spelling.sw.yaml");

fn main() {}
