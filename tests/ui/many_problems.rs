swf_runtime::workflow!("../../../../tests/ui/many_problems.sw.yaml");

fn main() {}
