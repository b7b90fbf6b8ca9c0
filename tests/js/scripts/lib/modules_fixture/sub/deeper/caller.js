// Requires packages from ../../node_modules: node's lookup walks up from here.
module.exports = {
  plain: require('plain'),
  extra: require('plain/extra'),
  exp: require('@scope/exp'),
  feature: require('@scope/exp/feature'),
  resolved: require.resolve('plain'),
};
