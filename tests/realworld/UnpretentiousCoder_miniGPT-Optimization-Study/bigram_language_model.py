import torch
import torch.nn as nn
from torch.nn import functional as F
torch.manual_seed(42)

class BigramLanguageModel(nn.Module):
    def __init__(self, vocab_size, n_embed=384, num_heads=6, block_size=256):
        super().__init__()
        self.n_embed = n_embed
        self.num_heads = num_heads
        self.block_size = block_size
        self.token_embedding_table = nn.Embedding(vocab_size, n_embed) #this maps each token to a vector of size "n_embed" #semantic meaning of the token is captured in the vector representation, which is learned during training
        self.position_embedding_table = nn.Embedding(block_size, n_embed) #T by C, maps the position of each token in the input sequence to a vector of size "n_embed" #this allows the model to capture the order of the tokens in the input sequence, which is important for language modeling
        self.blocks = nn.Sequential(Block(n_embed, num_heads, block_size), 
                                    Block(n_embed, num_heads, block_size),
                                    Block(n_embed, num_heads, block_size),
                                    Block(n_embed, num_heads, block_size),
                                    Block(n_embed, num_heads, block_size),
                                    ) #this is a stack of transformer blocks, each block contains a multi-head self-attention layer and a feed-forward layer
        self.ln_f = LayerNorm(n_embed) #final layer norm before the output layer
        self.lm_head = nn.Linear(n_embed, vocab_size) #the attention block projects back to the embedding size before predicting the next token
        #vector of size n_embed for each token in the input sequence, which is then used to predict the next token in the sequence

    def forward(self, idx, targets= None): 
        B, T = idx.shape
        token_embed = self.token_embedding_table(idx) #this returns a tensor of shape (batch_size, block_size, n_embed)
        pos_embed = self.position_embedding_table(torch.arange(T, device=idx.device)) #this returns a tensor of shape (block_size, n_embed)
        x = token_embed + pos_embed #this adds the token embeddings and position embeddings together, shape (batch_size, block_size, n_embed)
        x = self.blocks(x) #this passes the input through the transformer blocks, shape (batch_size, block_size, n_embed)
        x = self.ln_f(x) #apply final layer norm
        logits = self.lm_head(x) #this returns a tensor of shape (batch_size, block_size, vocab_size). Y = X@W.T + b
        if targets is None:
            loss = None
        else:
            B, T, C = logits.shape
            logits = logits.view(B*T, C) #converts to a 2D tensor of shape (B*T, C) for the loss function
            targets = targets.view(B*T)
            loss = F.cross_entropy(logits, targets)
        return logits, loss #B,T,C
    
    def generate(self, idx, max_new_tokens): #idx is B,T
        for _ in range(max_new_tokens):
            idx_cond = idx[:, -self.block_size:] #this ensures that the input to the model is always of shape (B, block_size), which is the maximum context size that the model can handle
            logits, loss = self(idx_cond) #runs the forward
            logits = logits[:, -1, :] #keep the last time step(column) of the logits, shape (B, C)
            probs = F.softmax(logits, dim = -1)#converts the logits to probabilities, shape (B, C)
            idx_next = torch.multinomial(probs, num_samples=1) #returns a tensor of shape (B, 1) with the index of the next token sampled from the probabilities
            idx = torch.cat((idx, idx_next), dim =1) #this concatenates the new token to the input tensor, shape (B, T+1)
        return idx
    

class Head(nn.Module):
    """one head of attention"""
    def __init__(self, n_embed, head_size, block_size):
        super().__init__()
        self.key = nn.Linear(n_embed, head_size, bias = False)
        self.query = nn.Linear(n_embed, head_size, bias = False)
        self.value = nn.Linear(n_embed, head_size, bias = False)
        self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size))) #lower triangular matrix of shape (block_size, block_size). this ensures only the previous tokens can affect the curr token
        self.dropout = nn.Dropout(0.2)

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)   # (B, T, head_size)
        q = self.query(x) # (B, T, head_size)
        v = self.value(x) # (B, T, head_size)
        head_size = q.shape[-1]

        wei = q @ k.transpose(-2, -1) / (head_size ** 0.5) # (B, T, head_size) @ (B, head_size, T) = (B, T, T)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))
        wei = F.softmax(wei, dim = -1)  
        wei = self.dropout(wei)
        out = wei @ v # (B, T, T) @ (B, T, head_size) = (B, T, head_size)
        return out
    
class MultiHeadAttention(nn.Module):
    """multiple heads of self-attention in parallel"""
    def __init__(self, num_heads, n_embed, head_size, block_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(n_embed, head_size, block_size) for _ in range(num_heads)])
        self.proj = nn.Linear(num_heads * head_size, n_embed) #this is the O proj
        self.dropout = nn.Dropout(0.2)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        out = self.proj(out)
        out = self.dropout(out)
        return out
    
class FeedForward(nn.Module):
    """linear layer followed by a non-lienar activation function"""
    def __init__(self, n_embed):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_embed, 4 * n_embed),
            nn.ReLU(),
            nn.Linear(4 * n_embed, n_embed),
            nn.Dropout(0.2)
        )
    def forward(self, x):
        return self.net(x)
    
class Block(nn.Module):
    """Transformer block: communication followed by computation"""
    def __init__(self, n_embed, num_heads, block_size):
        super().__init__()
        head_size = n_embed // num_heads
        self.sa_head = MultiHeadAttention(num_heads=num_heads, n_embed=n_embed, head_size=head_size, block_size=block_size)
        self.ffwd = FeedForward(n_embed)
        self.ln1 = LayerNorm(n_embed)
        self.ln2 = LayerNorm(n_embed)

    def forward(self, x):
        x = x + self.sa_head(self.ln1(x)) #residual connection
        x = x + self.ffwd(self.ln2(x)) #residual connection
        return x

class LayerNorm(nn.Module):
    """Layer normalization"""
    def __init__(self, n_embed, eps=1e-5):
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(n_embed))
        self.beta = nn.Parameter(torch.zeros(n_embed))
        self.eps = eps

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased = False)
        x_norm = (x - mean) / torch.sqrt(var + self.eps)
        return self.gamma * x_norm + self.beta
