swf_runtime::workflow!("../../../../tests/ui/out_of_scope.sw.yaml");

fn main() {}
