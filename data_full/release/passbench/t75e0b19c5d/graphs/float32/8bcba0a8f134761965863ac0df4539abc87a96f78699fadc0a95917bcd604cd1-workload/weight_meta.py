class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [8, 49]
    dtype = 'torch.int64'
    device = 'cpu'
    mean = 0.52551
    std = 0.499349
    min_val = 0
    max_val = 1
    data = None
    kind = 'input'
