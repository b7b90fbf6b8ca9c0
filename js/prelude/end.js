
  return hooks;
})
