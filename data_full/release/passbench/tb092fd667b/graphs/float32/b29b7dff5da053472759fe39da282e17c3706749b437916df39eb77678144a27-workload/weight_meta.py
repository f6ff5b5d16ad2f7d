class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [8, 64, 64, 64]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_w_0:
    name = 'w_0'
    original_name = 'in1'
    shape = [24, 64, 1, 1]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0008104746071424529
    std = 0.02028088443437307
    min_val = -0.06049126014113426
    max_val = 0.08135735243558884
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_w_1:
    name = 'w_1'
    original_name = 'in2'
    shape = [24]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 0.0
    min_val = 0.0
    max_val = 0.0
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_in_1:
    name = 'in_1'
    original_name = 'in3'
    shape = [8, 4, 64, 64]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_2:
    name = 'in_2'
    original_name = 'in4'
    shape = [8, 4, 64, 64]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'
