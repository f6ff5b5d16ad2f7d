class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [1, 16]
    dtype = 'torch.int32'
    device = 'cpu'
    mean = 0.625
    std = 0.484123
    min_val = 0
    max_val = 1
    data = None
    kind = 'input'
