class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [4, 256, 1]
    dtype = 'torch.int64'
    device = 'cpu'
    mean = 0.501953
    std = 0.499996
    min_val = 0
    max_val = 1
    data = None
    kind = 'input'
