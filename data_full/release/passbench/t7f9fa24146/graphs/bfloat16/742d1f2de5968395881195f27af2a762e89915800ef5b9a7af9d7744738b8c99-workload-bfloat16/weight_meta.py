class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [8, 2592, 28, 28]
    dtype = 'torch.bfloat16'
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
    shape = [192, 2592, 1, 1]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 0.02
    min_val = None
    max_val = None
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_w_1:
    name = 'w_1'
    original_name = 'in2'
    shape = [192]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 0.02
    min_val = None
    max_val = None
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_in_1:
    name = 'in_1'
    original_name = 'in3'
    shape = [8, 192, 1, 1]
    dtype = 'torch.bfloat16'
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
    shape = [8, 264, 28, 28]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_3:
    name = 'in_3'
    original_name = 'in5'
    shape = [8, 192, 28, 28]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_4:
    name = 'in_4'
    original_name = 'in6'
    shape = [8, 192, 28, 28]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'
