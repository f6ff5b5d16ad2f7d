class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [1, 128, 128]
    dtype = 'torch.complex64'
    device = 'cpu'
    mean = -0.0107667
    std = 0.708511
    min_val = None
    max_val = None
    data = None
    kind = 'input'
