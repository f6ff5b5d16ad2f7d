class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [1, 2, 128]
    dtype = 'torch.int64'
    device = 'cpu'
    mean = 496.371
    std = 293.4
    min_val = 0
    max_val = 999
    data = None
    kind = 'input'
