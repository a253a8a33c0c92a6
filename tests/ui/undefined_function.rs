swf_runtime::workflow!("ui/undefined_function.sw.yaml");

fn main() {}
