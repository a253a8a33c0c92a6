swf_runtime::workflow!("../../../../tests/ui/undefined_function.sw.yaml");

fn main() {}
