class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [4, 8]
    dtype = 'torch.int64'
    device = 'cpu'
    mean = 0.5625
    std = 0.496078
    min_val = 0
    max_val = 1
    data = None
    kind = 'input'
