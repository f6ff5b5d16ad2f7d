class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [1, 512, 512]
    dtype = 'torch.complex64'
    device = 'cpu'
    mean = -0.00189572
    std = 0.707102
    min_val = None
    max_val = None
    data = None
    kind = 'input'
